build-e-san/tui/cmd_dataset.o: tui/cmd_dataset.c tui/cli.h \
 engine/include/dp/status.h tui/cmd.h engine/include/dp/coarsen.h \
 engine/include/dp/graph.h engine/include/dp/grouped.h \
 engine/include/dp/dataset.h engine/include/dp/model.h \
 engine/include/dp/settings.h engine/include/dp/sim.h \
 engine/include/dp/trace.h engine/include/dp/zoo.h
tui/cli.h:
engine/include/dp/status.h:
tui/cmd.h:
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/grouped.h:
engine/include/dp/dataset.h:
engine/include/dp/model.h:
engine/include/dp/settings.h:
engine/include/dp/sim.h:
engine/include/dp/trace.h:
engine/include/dp/zoo.h:
