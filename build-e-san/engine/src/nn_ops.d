build-e-san/engine/src/nn_ops.o: engine/src/nn_ops.c \
 engine/include/dp/nn.h engine/include/dp/status.h engine/src/nn_impl.h
engine/include/dp/nn.h:
engine/include/dp/status.h:
engine/src/nn_impl.h:
