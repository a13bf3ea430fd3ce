build-e-san/engine/src/trace.o: engine/src/trace.c \
 engine/include/dp/trace.h engine/include/dp/status.h
engine/include/dp/trace.h:
engine/include/dp/status.h:
