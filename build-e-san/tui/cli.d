build-e-san/tui/cli.o: tui/cli.c tui/cli.h engine/include/dp/status.h
tui/cli.h:
engine/include/dp/status.h:
