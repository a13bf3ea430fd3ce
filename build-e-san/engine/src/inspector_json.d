build-e-san/engine/src/inspector_json.o: engine/src/inspector_json.c \
 engine/include/dp/inspector.h engine/include/dp/model.h \
 engine/include/dp/grouped.h engine/include/dp/status.h \
 engine/src/inspector_impl.h engine/src/json_util.h \
 /usr/include/cjson/cJSON.h
engine/include/dp/inspector.h:
engine/include/dp/model.h:
engine/include/dp/grouped.h:
engine/include/dp/status.h:
engine/src/inspector_impl.h:
engine/src/json_util.h:
/usr/include/cjson/cJSON.h:
