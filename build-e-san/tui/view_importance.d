build-e-san/tui/view_importance.o: tui/view_importance.c \
 tui/view_importance.h engine/include/dp/explain.h \
 engine/include/dp/coarsen.h engine/include/dp/graph.h \
 engine/include/dp/status.h engine/include/dp/grouped.h \
 engine/include/dp/model.h engine/include/dp/render.h
tui/view_importance.h:
engine/include/dp/explain.h:
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/grouped.h:
engine/include/dp/model.h:
engine/include/dp/render.h:
