build-e-san/engine/src/netdev.o: engine/src/netdev.c \
 engine/include/dp/record.h engine/include/dp/status.h
engine/include/dp/record.h:
engine/include/dp/status.h:
