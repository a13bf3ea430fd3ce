build-e-san/engine/src/nn_forward.o: engine/src/nn_forward.c \
 /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h \
 /usr/include/x86_64-linux-gnu/openblas-pthread/openblas_config.h \
 engine/include/dp/status.h engine/src/nn_impl.h engine/include/dp/nn.h
/usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h:
/usr/include/x86_64-linux-gnu/openblas-pthread/openblas_config.h:
engine/include/dp/status.h:
engine/src/nn_impl.h:
engine/include/dp/nn.h:
