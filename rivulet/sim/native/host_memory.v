// The native top's host memories (rivulet/sim/native/host_memory.py): words without initial
// contents, WRITES synchronous write ports on one clock and READS asynchronous read ports.
// Written by hand because Amaranth spells out every word of a memory's initial contents, which
// takes minutes for the millions of words a whole data set needs; the driver loads every word
// it reads before a run.
module rivulet_host_memory #(
    parameter WIDTH = 32,
    parameter ABITS = 15,
    parameter WRITES = 1,
    parameter READS = 1
) (
    input  wire                      wclk,
    input  wire [WRITES-1:0]         wen,
    input  wire [WRITES*ABITS-1:0]   waddr,
    input  wire [WRITES*WIDTH-1:0]   wdata,
    input  wire [READS*ABITS-1:0]    raddr,
    output wire [READS*WIDTH-1:0]    rdata
);
    reg [WIDTH-1:0] words [0:(1 << ABITS) - 1];
    integer port;
    always @(posedge wclk) begin
        for (port = 0; port < WRITES; port = port + 1)
            if (wen[port])
                words[waddr[port*ABITS +: ABITS]] <= wdata[port*WIDTH +: WIDTH];
    end
    genvar read;
    generate
        for (read = 0; read < READS; read = read + 1) begin : reads
            assign rdata[read*WIDTH +: WIDTH] = words[raddr[read*ABITS +: ABITS]];
        end
    endgenerate
endmodule
