build-e-san/engine/src/zoo.o: engine/src/zoo.c engine/include/dp/zoo.h \
 engine/include/dp/graph.h engine/include/dp/status.h \
 engine/include/dp/settings.h engine/src/zoo_builder.h
engine/include/dp/zoo.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/settings.h:
engine/src/zoo_builder.h:
