build-e-san/engine/src/model.o: engine/src/model.c \
 engine/include/dp/model.h engine/include/dp/grouped.h \
 engine/include/dp/status.h engine/src/model_impl.h \
 engine/src/model_tape.h
engine/include/dp/model.h:
engine/include/dp/grouped.h:
engine/include/dp/status.h:
engine/src/model_impl.h:
engine/src/model_tape.h:
