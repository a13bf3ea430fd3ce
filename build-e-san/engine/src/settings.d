build-e-san/engine/src/settings.o: engine/src/settings.c \
 engine/include/dp/settings.h engine/include/dp/status.h
engine/include/dp/settings.h:
engine/include/dp/status.h:
