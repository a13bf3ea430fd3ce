/* test_text.c: fitting text into the explorer's columns without a terminal: columns of UTF-8
 * text, wrapping at blanks (nothing lost, no line over its width, no word cut where a line had
 * room for it), hanging indents, and eliding the middle of long names so that their
 * distinguishing tail stays (issue 16: eight identical "resnet50/block1/unit1/conv3/BatchNor"). */
#include <stdio.h>
#include <string.h>

#include "../tui/text.h"
#include "test.h"

/* Wraps s at width and checks the lines: within width, words whole unless longer than a line,
 * and together every non-blank character of s in order. Returns the line count. */
static int wrap_ok(const char *s, int width, int indent) {
    struct text_line l[64];
    int n = text_wrap(s, width, indent, l, 64);
    CHECK(n <= 64);
    char joined[2048] = "", squeezed[2048] = "";
    size_t jl = 0, sl = 0;
    for (int i = 0; i < n && i < 64; i++) {
        char line[512];
        snprintf(line, sizeof line, "%.*s", l[i].len, s + l[i].start);
        CHECK(l[i].indent + text_cols(line) <= width);
        CHECK(!line[0] || line[strlen(line) - 1] != ' ');
        /* a break inside a word only for a word longer than the line */
        if (i + 1 < n && l[i].start + l[i].len < (int)strlen(s) &&
            s[l[i].start + l[i].len] != ' ' && s[l[i].start + l[i].len] != '\n') {
            const char *w = s + l[i].start + l[i].len;
            while (w > s && w[-1] != ' ') w--;
            const char *e = w;
            while (*e && *e != ' ') e++;
            CHECK((int)(e - w) > width - l[i].indent - (i ? 0 : 0) || w == s + l[i].start);
        }
        for (const char *p = line; *p; p++)
            if (*p != ' ' && jl + 1 < sizeof joined) joined[jl++] = *p;
    }
    for (const char *p = s; *p; p++)
        if (*p != ' ' && *p != '\n' && sl + 1 < sizeof squeezed) squeezed[sl++] = *p;
    joined[jl] = squeezed[sl] = '\0';
    CHECK(!strcmp(joined, squeezed));
    return n;
}

static void test_cols(void) {
    CHECK(text_cols("") == 0 && text_cols(NULL) == 0);
    CHECK(text_cols("abc") == 3);
    CHECK(text_cols("a\xe2\x80\xa6" "b") == 3);         /* "a…b" */
    CHECK(text_cols("\xe2\x96\x87\xe2\x96\x87") == 2); /* "▇▇" */
    CHECK(text_bytes("a\xe2\x80\xa6" "b", 2) == 4 && text_bytes("ab", 5) == 2);
}

static void test_wrap(void) {
    const char *st = "resnet50: 2774 of 2781 ops in 100 groups; 35 GPUs, 42 settings, 42 with "
                     "an inspector file";
    CHECK(wrap_ok(st, 200, 0) == 1);
    CHECK(wrap_ok(st, 80, 0) == 2);
    CHECK(wrap_ok(st, 40, 0) == 3);
    struct text_line l[8];
    CHECK(text_wrap(st, 80, 0, l, 8) == 2);
    /* the first line ends at a blank, not inside "inspector" */
    CHECK(l[0].len <= 80 && st[l[0].start + l[0].len] == ' ');
    CHECK(!strncmp(st + l[1].start, "an inspector", 12) || !strncmp(st + l[1].start, "with", 4) ||
          !strncmp(st + l[1].start, "inspector", 9));
    /* hanging indent */
    const char *h = "  net_mb_per_iter = 2 x params x 4 B (one worker under PS training pulls "
                    "every variable and pushes every gradient, fp32 on the wire)";
    int n = wrap_ok(h, 50, 19);
    CHECK(n >= 3);
    CHECK(text_wrap(h, 50, 19, l, 8) == n && l[0].indent == 0 && l[1].indent == 19);
    /* a word longer than a line is split, nothing lost */
    wrap_ok("x /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/bbbbbbbbbbbbbbbbbbbbbbbbbbbb y", 20,
            0);
    /* newlines break; empty text takes no line; a tiny width still terminates */
    CHECK(wrap_ok("one\ntwo three", 40, 0) == 2);
    CHECK(text_wrap("", 10, 0, l, 8) == 0 && text_wrap("abc", 0, 0, l, 8) == 0);
    CHECK(wrap_ok("abcdef ghij", 1, 0) == 10);
    /* UTF-8 counts columns, not bytes */
    CHECK(wrap_ok("\xe2\x96\x87\xe2\x96\x87\xe2\x96\x87 \xe2\x96\x87\xe2\x96\x87", 4, 0) == 2);
    /* more lines than room: the count is still the whole */
    CHECK(text_wrap(st, 10, 0, l, 2) > 2);
}

static void test_elide(void) {
    char buf[256];
    /* fits: unchanged */
    CHECK(!text_elide(buf, sizeof buf, "conv1/Conv2D", 40, false) && !strcmp(buf, "conv1/Conv2D"));
    /* eight ops of one block differ only in their tail: the tail stays */
    const char *ops[] = {"resnet50/block1/unit1/conv3/BatchNorm/FusedBatchNormV3",
                         "resnet50/block1/unit1/conv3/BatchNorm/gamma/read",
                         "resnet50/block1/unit1/conv3/BatchNorm/beta/Assign"};
    char seen[3][64];
    for (int i = 0; i < 3; i++) {
        CHECK(text_elide(seen[i], sizeof seen[i], ops[i], 36, false));
        CHECK(text_cols(seen[i]) <= 36);
        CHECK(strstr(seen[i], "\xe2\x80\xa6") != NULL);
        const char *tail = strrchr(ops[i], '/');
        CHECK(strstr(seen[i], tail) != NULL);
    }
    CHECK(strcmp(seen[0], seen[1]) && strcmp(seen[1], seen[2]) && strcmp(seen[0], seen[2]));
    /* as much of the tail as fits, the head given up for it */
    CHECK(!strcmp(seen[0], "\xe2\x80\xa6/conv3/BatchNorm/FusedBatchNormV3"));
    /* the head stays where dropping it gains no part */
    CHECK(text_elide(buf, sizeof buf, "ab/x/yyyyyy/longtailpart", 20, false) &&
          !strcmp(buf, "ab/\xe2\x80\xa6/longtailpart"));
    /* ASCII: one '~' */
    CHECK(text_elide(buf, sizeof buf, ops[0], 30, true) && strchr(buf, '~') &&
          text_cols(buf) <= 30 && strstr(buf, "FusedBatchNormV3"));
    /* the last part alone too long: its end stays */
    CHECK(text_elide(buf, sizeof buf, "a/averyveryverylongopnamewithatail_XYZ", 12, false));
    CHECK(text_cols(buf) <= 12 && strstr(buf, "XYZ"));
    /* not a path */
    CHECK(text_elide(buf, sizeof buf, "abcdefghijklmnopqrstuvwxyz", 10, true));
    CHECK(text_cols(buf) == 10 && buf[0] == 'a' && buf[9] == 'z');
    CHECK(text_elide(buf, sizeof buf, "abcdef", 0, true) && buf[0] == '\0');
    CHECK(text_elide(buf, sizeof buf, "abcdef", 1, true) && !strcmp(buf, "~"));
}

/* Names that differ in a middle part only: the part where they differ stays. */
static void test_elide_keep(void) {
    char buf[256], plain[3][64], kept[3][64];
    const char *ops[] = {"resnet50/block3/unit1/shortcut/kernel/Initializer/truncated_normal/shape",
                         "resnet50/block3/unit1/conv1/kernel/Initializer/truncated_normal/shape",
                         "resnet50/block3/unit1/conv2/kernel/Initializer/truncated_normal/shape"};
    size_t keep = strlen("resnet50/block3/unit1/"); /* where they first differ */
    for (int i = 0; i < 3; i++) {
        CHECK(text_elide(plain[i], sizeof plain[i], ops[i], 35, false));
        CHECK(text_elide_keep(kept[i], sizeof kept[i], ops[i], keep, 35, false));
        CHECK(text_cols(kept[i]) <= 35 && strstr(kept[i], "truncated_normal/shape"));
    }
    CHECK(!strcmp(plain[0], plain[1]) && !strcmp(plain[1], plain[2])); /* alike elided plainly */
    CHECK(strcmp(kept[0], kept[1]) && strcmp(kept[1], kept[2]) && strcmp(kept[0], kept[2]));
    /* the head given up for more of the tail */
    CHECK(!strcmp(kept[1], "\xe2\x80\xa6/conv1/\xe2\x80\xa6/truncated_normal/shape"));
    /* wider: the head stays too */
    CHECK(text_elide_keep(buf, sizeof buf, ops[1], keep, 42, false) &&
          !strcmp(buf, "resnet50/\xe2\x80\xa6/conv1/\xe2\x80\xa6/truncated_normal/shape"));
    /* the part right after the head joins it; a tail reaching the part needs no second "~" */
    CHECK(text_elide_keep(buf, sizeof buf, "net/blockA/x/yy/zzzzzzzz", 4, 21, true) &&
          !strcmp(buf, "net/blockA/~/zzzzzzzz"));
    CHECK(text_elide_keep(buf, sizeof buf, "net/a/blockA/yy/zz", 6, 16, true) &&
          !strcmp(buf, "~/blockA/yy/zz"));
    /* fits, keep out of range, in the first or the last part: as text_elide */
    CHECK(!text_elide_keep(buf, sizeof buf, "conv1/Conv2D", 0, 40, false) &&
          !strcmp(buf, "conv1/Conv2D"));
    text_elide(plain[0], sizeof plain[0], ops[0], 30, false);
    CHECK(text_elide_keep(buf, sizeof buf, ops[0], 999, 30, false) && !strcmp(buf, plain[0]));
    CHECK(text_elide_keep(buf, sizeof buf, ops[0], 2, 30, false) && !strcmp(buf, plain[0]));
    CHECK(text_elide_keep(buf, sizeof buf, ops[0], strlen(ops[0]) - 1, 30, false) &&
          !strcmp(buf, plain[0]));
    /* the part cannot fit: as text_elide */
    CHECK(text_elide_keep(buf, sizeof buf, ops[0], keep, 12, false) && text_cols(buf) <= 12);
}

int main(void) {
    test_cols();
    test_wrap();
    test_elide();
    test_elide_keep();
    TEST_MAIN_END();
}
