build-e-san/engine/src/inspector.o: engine/src/inspector.c \
 engine/include/dp/inspector.h engine/include/dp/model.h \
 engine/include/dp/grouped.h engine/include/dp/status.h \
 engine/include/dp/torch.h engine/src/inspector_impl.h
engine/include/dp/inspector.h:
engine/include/dp/model.h:
engine/include/dp/grouped.h:
engine/include/dp/status.h:
engine/include/dp/torch.h:
engine/src/inspector_impl.h:
