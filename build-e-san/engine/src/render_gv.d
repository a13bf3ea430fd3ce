build-e-san/engine/src/render_gv.o: engine/src/render_gv.c \
 engine/include/dp/render.h engine/include/dp/explain.h \
 engine/include/dp/coarsen.h engine/include/dp/graph.h \
 engine/include/dp/status.h engine/include/dp/grouped.h \
 engine/include/dp/model.h /usr/include/graphviz/gvc.h \
 /usr/include/graphviz/types.h /usr/include/graphviz/geom.h \
 /usr/include/graphviz/arith.h /usr/include/graphviz/gvcext.h \
 /usr/include/graphviz/pathgeom.h /usr/include/graphviz/textspan.h \
 /usr/include/graphviz/cgraph.h /usr/include/graphviz/cdt.h \
 /usr/include/graphviz/usershape.h /usr/include/graphviz/gvplugin.h
engine/include/dp/render.h:
engine/include/dp/explain.h:
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/grouped.h:
engine/include/dp/model.h:
/usr/include/graphviz/gvc.h:
/usr/include/graphviz/types.h:
/usr/include/graphviz/geom.h:
/usr/include/graphviz/arith.h:
/usr/include/graphviz/gvcext.h:
/usr/include/graphviz/pathgeom.h:
/usr/include/graphviz/textspan.h:
/usr/include/graphviz/cgraph.h:
/usr/include/graphviz/cdt.h:
/usr/include/graphviz/usershape.h:
/usr/include/graphviz/gvplugin.h:
