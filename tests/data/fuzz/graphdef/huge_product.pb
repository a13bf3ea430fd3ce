
7
bigRelu**
_output_shapes
:€€€€€€€€