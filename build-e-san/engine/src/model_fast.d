build-e-san/engine/src/model_fast.o: engine/src/model_fast.c \
 /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h \
 /usr/include/x86_64-linux-gnu/openblas-pthread/openblas_config.h \
 engine/src/model_impl.h engine/include/dp/model.h \
 engine/include/dp/grouped.h engine/include/dp/status.h \
 engine/src/nn_math.h
/usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h:
/usr/include/x86_64-linux-gnu/openblas-pthread/openblas_config.h:
engine/src/model_impl.h:
engine/include/dp/model.h:
engine/include/dp/grouped.h:
engine/include/dp/status.h:
engine/src/nn_math.h:
