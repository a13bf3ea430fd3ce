build-e-san/tui/cmd_bench.o: tui/cmd_bench.c tui/cli.h \
 engine/include/dp/status.h tui/cmd.h engine/include/dp/grouped.h \
 engine/include/dp/inspector.h engine/include/dp/model.h
tui/cli.h:
engine/include/dp/status.h:
tui/cmd.h:
engine/include/dp/grouped.h:
engine/include/dp/inspector.h:
engine/include/dp/model.h:
