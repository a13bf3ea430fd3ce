build-e-san/tui/cmd_record.o: tui/cmd_record.c tui/cli.h \
 engine/include/dp/status.h tui/cmd.h engine/include/dp/coarsen.h \
 engine/include/dp/graph.h engine/include/dp/grouped.h \
 engine/include/dp/dataset.h engine/include/dp/model.h \
 engine/include/dp/graph_io.h engine/include/dp/record.h \
 engine/include/dp/trace.h
tui/cli.h:
engine/include/dp/status.h:
tui/cmd.h:
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/grouped.h:
engine/include/dp/dataset.h:
engine/include/dp/model.h:
engine/include/dp/graph_io.h:
engine/include/dp/record.h:
engine/include/dp/trace.h:
