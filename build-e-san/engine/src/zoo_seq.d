build-e-san/engine/src/zoo_seq.o: engine/src/zoo_seq.c \
 engine/src/zoo_builder.h engine/include/dp/graph.h \
 engine/include/dp/status.h engine/include/dp/zoo.h \
 engine/include/dp/settings.h
engine/src/zoo_builder.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/zoo.h:
engine/include/dp/settings.h:
