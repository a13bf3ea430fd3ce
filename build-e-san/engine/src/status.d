build-e-san/engine/src/status.o: engine/src/status.c \
 engine/include/dp/status.h
engine/include/dp/status.h:
