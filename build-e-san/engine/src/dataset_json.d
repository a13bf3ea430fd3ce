build-e-san/engine/src/dataset_json.o: engine/src/dataset_json.c \
 engine/include/dp/dataset.h engine/include/dp/grouped.h \
 engine/include/dp/status.h engine/include/dp/model.h \
 engine/src/dataset_impl.h engine/src/json_util.h \
 /usr/include/cjson/cJSON.h
engine/include/dp/dataset.h:
engine/include/dp/grouped.h:
engine/include/dp/status.h:
engine/include/dp/model.h:
engine/src/dataset_impl.h:
engine/src/json_util.h:
/usr/include/cjson/cJSON.h:
