build-e-san/tui/view_imp.o: tui/view_imp.c tui/view_imp.h tui/app.h \
 engine/include/dp/coarsen.h engine/include/dp/graph.h \
 engine/include/dp/status.h engine/include/dp/grouped.h \
 engine/include/dp/inspector.h engine/include/dp/model.h \
 engine/include/dp/settings.h tui/layout.h engine/include/dp/render.h \
 engine/include/dp/explain.h tui/keys.h tui/view_importance.h
tui/view_imp.h:
tui/app.h:
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/grouped.h:
engine/include/dp/inspector.h:
engine/include/dp/model.h:
engine/include/dp/settings.h:
tui/layout.h:
engine/include/dp/render.h:
engine/include/dp/explain.h:
tui/keys.h:
tui/view_importance.h:
