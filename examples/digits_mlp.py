"""A 64-64-32-10 MLP on scikit-learn's digits (8x8 images, 10 classes), int8 on the fabric.

scikit-learn's bundled data set (no download) is split 80/20, stratified, seed 0; its
``MLPClassifier`` learns the float network (ReLU, two hidden layers); ``dense.quantise`` turns
it into int8 layers (docs/dense.md); ``dense.lower_network`` runs it on the fabric's lanes in
phases, the weights streamed from the host once per pass. The expected logits come from the int8
arithmetic written out below in numpy, not from Rivulet.

Run it: ``rivulet run examples/digits_mlp.py --sim rtl`` (the whole test split, 360 images) or
``-D images=12`` for a few. Needs scikit-learn: ``pip install 'rivulet-hw[ml]'``.
"""

import functools
import warnings

import numpy as np

from dense import lower_network, quantise

HIDDEN = (64, 32)
SEED = 0


@functools.cache
def trained(seed: int = SEED):
    """(quantised network, test images as int8 inputs, test labels, float accuracy)."""
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
        from sklearn.neural_network import MLPClassifier
    except ImportError:
        raise SystemExit("examples/digits_mlp.py needs scikit-learn: pip install 'rivulet-hw[ml]'") from None
    digits = load_digits()
    train_x, test_x, train_y, test_y = train_test_split(digits.data, digits.target, test_size=0.2,
                                                        random_state=0, stratify=digits.target)
    model = MLPClassifier(hidden_layer_sizes=HIDDEN, max_iter=400, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # a convergence warning at max_iter is not an error
        model.fit(train_x / 16, train_y)
    float_accuracy = float(model.score(test_x / 16, test_y))
    # The float model saw pixels / 16; folding the 1/16 into the first weights lets the int8
    # network take the pixels' own scale.
    layers = [(weights.T, biases) for weights, biases in zip(model.coefs_, model.intercepts_, strict=True)]
    layers[0] = (layers[0][0] / 16, layers[0][1])
    quantised = quantise(layers, train_x)
    return quantised, quantised.inputs(test_x), test_y, float_accuracy


def int8_logits(network, inputs) -> np.ndarray:
    """The int8 network in plain numpy: per layer, int8 dot products plus bias x bias_input with
    32-bit wrapping sums, then ReLU, arithmetic shift and clip where the layer has them."""
    values = np.asarray(inputs, dtype=np.int64)
    for layer in network.layers:
        sums = values @ layer.weights.T
        if layer.bias is not None:
            sums = sums + layer.bias * network.bias_input
        sums = (sums + (1 << 31)) % (1 << 32) - (1 << 31)
        if layer.relu:
            sums = np.maximum(sums, 0)
        sums = sums >> layer.shift
        if layer.clip is not None:
            sums = np.clip(sums, *layer.clip)
        values = sums
    return values


def lowered(fabric, images: int = 0, seed: int = SEED):
    """The lowered network on the first ``images`` test images (0: all of them)."""
    quantised, inputs, labels, float_accuracy = trained(seed)
    if images:
        inputs, labels = inputs[:images], labels[:images]
    expected = int8_logits(quantised.network, inputs)
    result = lower_network(quantised.network, inputs, fabric, expected=expected, name="digits-mlp")
    reference_accuracy = float(np.mean(expected.argmax(axis=1) == labels))
    result.program.description = (f"{len(inputs)} test images; accuracy: float {float_accuracy:.4f}, int8 "
                                  f"reference {reference_accuracy:.4f}; {result.lanes} lanes")
    return result, labels


def program(fabric, images: int = 0, seed: int = SEED):
    return lowered(fabric, images, seed)[0].program
