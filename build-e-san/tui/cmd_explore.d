build-e-san/tui/cmd_explore.o: tui/cmd_explore.c tui/app.h \
 engine/include/dp/coarsen.h engine/include/dp/graph.h \
 engine/include/dp/status.h engine/include/dp/grouped.h \
 engine/include/dp/inspector.h engine/include/dp/model.h \
 engine/include/dp/settings.h tui/cli.h tui/cmd.h tui/keys.h tui/layout.h \
 tui/view_common.h tui/view_imp.h tui/view_importance.h \
 engine/include/dp/explain.h engine/include/dp/render.h
tui/app.h:
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/grouped.h:
engine/include/dp/inspector.h:
engine/include/dp/model.h:
engine/include/dp/settings.h:
tui/cli.h:
tui/cmd.h:
tui/keys.h:
tui/layout.h:
tui/view_common.h:
tui/view_imp.h:
tui/view_importance.h:
engine/include/dp/explain.h:
engine/include/dp/render.h:
