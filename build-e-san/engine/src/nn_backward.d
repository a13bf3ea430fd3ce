build-e-san/engine/src/nn_backward.o: engine/src/nn_backward.c \
 engine/include/dp/status.h engine/src/nn_impl.h engine/include/dp/nn.h
engine/include/dp/status.h:
engine/src/nn_impl.h:
engine/include/dp/nn.h:
