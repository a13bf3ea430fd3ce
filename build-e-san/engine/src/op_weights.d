build-e-san/engine/src/op_weights.o: engine/src/op_weights.c \
 engine/include/dp/coarsen.h engine/include/dp/graph.h \
 engine/include/dp/status.h engine/include/dp/grouped.h \
 engine/src/json_util.h /usr/include/cjson/cJSON.h
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/grouped.h:
engine/src/json_util.h:
/usr/include/cjson/cJSON.h:
