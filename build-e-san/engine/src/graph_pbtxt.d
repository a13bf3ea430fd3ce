build-e-san/engine/src/graph_pbtxt.o: engine/src/graph_pbtxt.c \
 engine/include/dp/graph_io.h engine/include/dp/graph.h \
 engine/include/dp/status.h engine/src/json_util.h \
 /usr/include/cjson/cJSON.h
engine/include/dp/graph_io.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/src/json_util.h:
/usr/include/cjson/cJSON.h:
