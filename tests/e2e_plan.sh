#!/bin/sh
# e2e_plan.sh: `driple plan` and `zoo build --hf-config` (issue 29): the presets' parameter
# counts against their model cards, a search that finds fitting plans whose setting id goes back
# through --setting with the same figures, the refusals (a layout that cannot be, a config
# without the fields its layout needs), and --validate's published rows.
. tests/lib.sh
ok "$DRIPLE" plan --list
for want in "llama2-7b .* 6738415616 " "llama2-13b .* 13015864320 " "llama2-70b .* 68976648192 " \
            "llama3-8b .* 8030261248 " "llama3-70b .* 70553706496 " "mistral-7b .* 7241732096 "; do
    if grep -Eq "^$want" "$TMP/out"; then pass; else fail "plan --list lacks $want"; fi
done
ok "$DRIPLE" plan llama2-7b --gpus 64 --gpu H100-SXM --top 3
contains "$TMP/out" "on 64 GPUs"
contains "$TMP/out" "(modelled, not measured)"
id=$(awk '$1 == "1" {print $(NF - 2)}' "$TMP/out")
mb=$(awk '$1 == "1" {print $NF}' "$TMP/out")
tps=$(awk '$1 == "1" {print $15}' "$TMP/out")
ok "$DRIPLE" plan llama2-7b --setting "$id" --batch "$mb"
contains "$TMP/out" "$tps tokens/s"
ok "$DRIPLE" plan llama2-7b --gpus 64 --gpu H100-SXM --top 2 --json
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["plans"]) == 2' "$TMP/out" 2>/dev/null; then pass; else fail "plan --json: two plans"; fi
# the refusals: one line naming the option or the file and the rule
fails 2 "is larger than a machine" "$DRIPLE" plan llama2-7b --setting H100-AR64-IB-HDR-M8x8-pytorch-bf16-tp16 --batch 1
fails 1 "hidden size 4097 is not divisible by 32 attention heads" "$DRIPLE" plan tests/data/llm/bad-heads.json --gpus 8 --gpu H100-SXM
fails 1 'missing "num_attention_heads"' "$DRIPLE" plan tests/data/llm/missing-heads.json --gpus 8 --gpu H100-SXM
fails 2 "which GPU types" "$DRIPLE" plan llama2-7b --gpus 8
# a Hugging Face config builds the training graph every command reads
ok "$DRIPLE" zoo build --hf-config tests/data/llm/gpt2.json --seq 128 -o "$TMP/gpt2.json"
contains "$TMP/out" "124439808 params"
ok "$DRIPLE" graph info "$TMP/gpt2.json"
# the published runs: every one predicted to fit (they ran)
ok "$DRIPLE" plan --validate
contains "$TMP/out" "17 of 17 predicted to fit (all ran)"
finish
