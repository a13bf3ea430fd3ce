build-e-san/tui/main.o: tui/main.c tui/cmd.h
tui/cmd.h:
