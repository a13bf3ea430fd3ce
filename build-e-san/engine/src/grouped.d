build-e-san/engine/src/grouped.o: engine/src/grouped.c \
 engine/include/dp/grouped.h engine/include/dp/status.h \
 engine/src/json_util.h /usr/include/cjson/cJSON.h
engine/include/dp/grouped.h:
engine/include/dp/status.h:
engine/src/json_util.h:
/usr/include/cjson/cJSON.h:
