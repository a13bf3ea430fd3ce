build-e-san/engine/src/zoo_cnn.o: engine/src/zoo_cnn.c \
 engine/src/zoo_builder.h engine/include/dp/graph.h \
 engine/include/dp/status.h engine/include/dp/zoo.h \
 engine/include/dp/settings.h
engine/src/zoo_builder.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/zoo.h:
engine/include/dp/settings.h:
