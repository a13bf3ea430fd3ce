build-e-san/engine/src/settings_json.o: engine/src/settings_json.c \
 engine/include/dp/settings.h engine/include/dp/status.h \
 engine/src/json_util.h /usr/include/cjson/cJSON.h
engine/include/dp/settings.h:
engine/include/dp/status.h:
engine/src/json_util.h:
/usr/include/cjson/cJSON.h:
