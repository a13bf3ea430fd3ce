build-e-san/engine/src/model_train.o: engine/src/model_train.c \
 engine/src/model_impl.h engine/include/dp/model.h \
 engine/include/dp/grouped.h engine/include/dp/status.h \
 engine/src/model_tape.h
engine/src/model_impl.h:
engine/include/dp/model.h:
engine/include/dp/grouped.h:
engine/include/dp/status.h:
engine/src/model_tape.h:
