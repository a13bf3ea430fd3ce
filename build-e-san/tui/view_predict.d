build-e-san/tui/view_predict.o: tui/view_predict.c tui/view_common.h \
 tui/app.h engine/include/dp/coarsen.h engine/include/dp/graph.h \
 engine/include/dp/status.h engine/include/dp/grouped.h \
 engine/include/dp/inspector.h engine/include/dp/model.h \
 engine/include/dp/settings.h tui/layout.h
tui/view_common.h:
tui/app.h:
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/grouped.h:
engine/include/dp/inspector.h:
engine/include/dp/model.h:
engine/include/dp/settings.h:
tui/layout.h:
