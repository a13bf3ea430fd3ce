build-e-san/engine/src/dataset.o: engine/src/dataset.c \
 engine/include/dp/dataset.h engine/include/dp/grouped.h \
 engine/include/dp/status.h engine/include/dp/model.h \
 engine/src/dataset_impl.h
engine/include/dp/dataset.h:
engine/include/dp/grouped.h:
engine/include/dp/status.h:
engine/include/dp/model.h:
engine/src/dataset_impl.h:
