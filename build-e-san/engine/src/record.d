build-e-san/engine/src/record.o: engine/src/record.c \
 engine/include/dp/record.h engine/include/dp/status.h
engine/include/dp/record.h:
engine/include/dp/status.h:
