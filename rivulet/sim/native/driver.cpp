// The native driver of a simulation top (rivulet/sim/native/top.py): runs fabric runs at the
// Verilated model's own speed.
//
// Usage: driver RUNS RESULTS [TRACE_DIR]
//
// RUNS is a text file of whitespace-separated decimal numbers, written by runs.py:
//   <number of runs>
//   per run: <index> <trace 0|1> <CONFIG_COUNT config values> <word count> <words...>
// For each run the driver sets the config ports, loads the words into the input memory from
// address 0 (on the load clock, so the fabric is not clocked), resets the fabric for three
// cycles, clocks it until the top says the run has ended, and appends to RESULTS:
//   run <index> <cycles clocked> <microseconds>
//   status <STATUS_COUNT values>
//   sink <number> <count> <words...>        (one line per sink)
// With a trace, TRACE_DIR/trace-<index>.txt gets one line per cycle: the trace words in hex.
//
// design.h (generated per design) names the ports: set_config, get_status, get_trace, and the
// config/status positions of each sink's base and count.

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "Vtop.h"
#include "verilated.h"
#include "design.h"

namespace {

[[noreturn]] void fail(const std::string& message) {
    std::fprintf(stderr, "native driver: %s\n", message.c_str());
    std::exit(2);
}

uint64_t next_number(std::FILE* file, const char* what) {
    unsigned long long value;
    if (std::fscanf(file, "%llu", &value) != 1) fail(std::string("the run file ends before ") + what);
    return value;
}

void tick(Vtop& top) {
    top.clk = 0;
    top.eval();
    top.clk = 1;
    top.eval();
}

void load_tick(Vtop& top) {
    top.load_clk = 0;
    top.eval();
    top.load_clk = 1;
    top.eval();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) fail("usage: driver RUNS RESULTS [TRACE_DIR]");
    std::FILE* runs = std::fopen(argv[1], "r");
    if (!runs) fail(std::string("cannot read ") + argv[1]);
    std::FILE* results = std::fopen(argv[2], "w");
    if (!results) fail(std::string("cannot write ") + argv[2]);
    const std::string trace_dir = argc > 3 ? argv[3] : "";

    auto context = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Vtop>(context.get(), "top");
    top->load_rst = 0;
    top->load_en = 0;
    top->rst = 1;

    const uint64_t count = next_number(runs, "the number of runs");
    std::vector<uint64_t> config(CONFIG_COUNT);
    for (uint64_t run = 0; run < count; ++run) {
        const uint64_t index = next_number(runs, "a run's index");
        const bool trace = next_number(runs, "a run's trace flag") != 0;
        for (int i = 0; i < CONFIG_COUNT; ++i) config[i] = next_number(runs, "a config value");
        for (int i = 0; i < CONFIG_COUNT; ++i) set_config(*top, i, config[i]);
        // The top takes the settings and rst in on the load clock (top.py): the load ticks below
        // hold the fabric in reset from the first of the reset ticks on.
        top->rst = 1;
        const uint64_t words = next_number(runs, "a run's word count");
        top->load_en = 1;
        for (uint64_t address = 0; address < words; ++address) {
            top->load_addr = address;
            top->load_data = next_number(runs, "a run's words");
            load_tick(*top);
        }
        top->load_en = 0;
        load_tick(*top);

        std::FILE* trace_file = nullptr;
        if (trace) {
            const std::string path = trace_dir + "/trace-" + std::to_string(index) + ".txt";
            trace_file = std::fopen(path.c_str(), "w");
            if (!trace_file) fail("cannot write " + path);
        }
        for (int i = 0; i < 3; ++i) tick(*top);
        top->rst = 0;
        load_tick(*top);
        // The top ends every run by its cycle limit at the latest; this guard only catches a top
        // that does not (a bug of the top, not of the fabric).
        const uint64_t guard = config[CONFIG_MAX_CYCLES] + 16;
        const auto started = std::chrono::steady_clock::now();
        uint64_t cycles = 0;
        top->clk = 0;
        top->eval();
        while (!top->st_end) {
            if (trace_file) {
                for (int w = 0; w < TRACE_WORDS; ++w)
                    std::fprintf(trace_file, w ? " %08" PRIx32 : "%08" PRIx32, get_trace(*top, w));
                std::fputc('\n', trace_file);
            }
            top->clk = 1;
            top->eval();
            top->clk = 0;
            top->eval();
            if (++cycles > guard) fail("run " + std::to_string(index) + " passed its cycle limit without ending");
        }
        const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::steady_clock::now() - started).count();
        if (trace_file) std::fclose(trace_file);

        std::fprintf(results, "run %" PRIu64 " %" PRIu64 " %lld\nstatus", index, cycles,
                     static_cast<long long>(elapsed));
        for (int i = 0; i < STATUS_COUNT; ++i)
            std::fprintf(results, " %" PRIu64, get_status(*top, i));
        std::fputc('\n', results);
        for (int sink = 0; sink < SINK_COUNT; ++sink) {
            const uint64_t base = config[SINK_BASE[sink]];
            const uint64_t captured = get_status(*top, SINK_COUNT_STATUS[sink]);
            std::fprintf(results, "sink %d %" PRIu64, sink, captured);
            for (uint64_t k = 0; k < captured; ++k) {
                top->read_addr = base + k;
                top->eval();
                std::fprintf(results, " %" PRIu64, static_cast<uint64_t>(top->read_data));
            }
            std::fputc('\n', results);
        }
        std::fflush(results);
    }
    top->final();
    std::fclose(results);
    return 0;
}
