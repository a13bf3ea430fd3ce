build-e-san/engine/src/model_json.o: engine/src/model_json.c \
 engine/src/json_util.h /usr/include/cjson/cJSON.h \
 engine/include/dp/status.h engine/src/model_impl.h \
 engine/include/dp/model.h engine/include/dp/grouped.h
engine/src/json_util.h:
/usr/include/cjson/cJSON.h:
engine/include/dp/status.h:
engine/src/model_impl.h:
engine/include/dp/model.h:
engine/include/dp/grouped.h:
