build-e-san/engine/src/json_util.o: engine/src/json_util.c \
 engine/src/json_util.h /usr/include/cjson/cJSON.h \
 engine/include/dp/status.h
engine/src/json_util.h:
/usr/include/cjson/cJSON.h:
engine/include/dp/status.h:
