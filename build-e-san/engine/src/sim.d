build-e-san/engine/src/sim.o: engine/src/sim.c engine/include/dp/sim.h \
 engine/include/dp/graph.h engine/include/dp/status.h \
 engine/include/dp/settings.h engine/include/dp/trace.h \
 engine/include/dp/cost.h
engine/include/dp/sim.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/settings.h:
engine/include/dp/trace.h:
engine/include/dp/cost.h:
