// The bare model in a C++ loop: the Verilated fabric alone (no host side, inputs held at zero),
// clocked for CYCLES cycles after reset. Its speed is the ceiling of any simulation of the
// fabric; bench/sim_speed.py sets the native tier's speed against it.
//
// Usage: bare CYCLES    prints: <cycles> <microseconds>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "Vtop.h"
#include "verilated.h"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bare CYCLES\n");
        return 2;
    }
    const long long cycles = std::atoll(argv[1]);
    auto context = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Vtop>(context.get(), "top");
    top->rst = 1;
    for (int i = 0; i < 3; ++i) {
        top->clk = 0;
        top->eval();
        top->clk = 1;
        top->eval();
    }
    top->rst = 0;
    top->clk = 0;       // one more edge: the reset is held in a register (wrappers.py, Held)
    top->eval();
    top->clk = 1;
    top->eval();
    const auto started = std::chrono::steady_clock::now();
    for (long long i = 0; i < cycles; ++i) {
        top->clk = 0;
        top->eval();
        top->clk = 1;
        top->eval();
    }
    const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - started).count();
    std::printf("%lld %lld\n", cycles, static_cast<long long>(elapsed));
    top->final();
    return 0;
}
