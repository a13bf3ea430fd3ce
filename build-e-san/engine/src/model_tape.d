build-e-san/engine/src/model_tape.o: engine/src/model_tape.c \
 engine/include/dp/nn.h engine/src/model_impl.h engine/include/dp/model.h \
 engine/include/dp/grouped.h engine/include/dp/status.h \
 engine/src/model_tape.h
engine/include/dp/nn.h:
engine/src/model_impl.h:
engine/include/dp/model.h:
engine/include/dp/grouped.h:
engine/include/dp/status.h:
engine/src/model_tape.h:
