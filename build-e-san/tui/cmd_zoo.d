build-e-san/tui/cmd_zoo.o: tui/cmd_zoo.c tui/cli.h \
 engine/include/dp/status.h tui/cmd.h engine/include/dp/cost.h \
 engine/include/dp/graph.h engine/include/dp/graph_io.h \
 engine/include/dp/zoo.h engine/include/dp/settings.h
tui/cli.h:
engine/include/dp/status.h:
tui/cmd.h:
engine/include/dp/cost.h:
engine/include/dp/graph.h:
engine/include/dp/graph_io.h:
engine/include/dp/zoo.h:
engine/include/dp/settings.h:
