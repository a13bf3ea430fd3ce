build-e-san/engine/src/nvml.o: engine/src/nvml.c \
 engine/include/dp/record.h engine/include/dp/status.h
engine/include/dp/record.h:
engine/include/dp/status.h:
