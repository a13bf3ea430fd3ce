build-e-san/engine/src/train.o: engine/src/train.c \
 engine/include/dp/train.h engine/include/dp/dataset.h \
 engine/include/dp/grouped.h engine/include/dp/status.h \
 engine/include/dp/model.h engine/include/dp/inspector.h \
 engine/src/dataset_impl.h
engine/include/dp/train.h:
engine/include/dp/dataset.h:
engine/include/dp/grouped.h:
engine/include/dp/status.h:
engine/include/dp/model.h:
engine/include/dp/inspector.h:
engine/src/dataset_impl.h:
