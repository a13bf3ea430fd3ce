build-e-san/engine/src/torch_import.o: engine/src/torch_import.c \
 engine/include/dp/torch.h engine/include/dp/status.h
engine/include/dp/torch.h:
engine/include/dp/status.h:
