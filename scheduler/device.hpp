// The device interface: everything the blocked LU asks of a place that holds
// columns of the matrix. The scheduler is written against this header alone;
// gpu/ implements it with CUDA, cpu/ with host memory and BLAS.
//
// Contract
// --------
// * Storage. A device holds `local_cols` columns of the m x n matrix (its own
//   block columns, in increasing global order) in ROW-MAJOR order: element
//   (i, jl) of its local columns lives at storage[i * ld + jl], ld >= local_cols.
//   Row-major makes a row interchange two contiguous runs of memory.
//   All offsets and sizes are 64-bit; `r0`/`c0` are row / LOCAL column offsets.
// * Host blocks passed to upload/download/receive_panel are COLUMN-MAJOR with
//   leading dimension ldh; the device transposes. Host pointers must stay
//   valid (and unchanged, for uploads) until an event recorded after the call
//   on the same queue has completed. Use host_alloc() for buffers that must be
//   copied asynchronously (pinned memory on a GPU).
// * Panel workspace. receive_panel() stores the factored panel of the current
//   step (L11 with its unit diagonal implied, L21 below it, and inv(L11) when
//   the inverse path is used) in a workspace of the device, so that a device
//   that does not own the panel's columns can still update its own columns.
//   There are two workspaces, filled in turn: each receive_panel(), take_panel()
//   and take_panel_from() fills the one not filled by the previous such call,
//   and form_u12() / update_trailing() read the one filled last. So the next
//   step's panel may arrive while work issued earlier still reads the current
//   one; a fill must only wait for the readers of the panel before that.
// * Queues. Operations are issued to one of three in-order queues: `compute`
//   (the updates), `transfer` (the panels' traffic and device panels: latency
//   matters; with several devices also the look-ahead, the update of the
//   next panel's block) and `copy` (bulk traffic of the matrix itself). Work on different
//   queues may overlap; record()/wait() order it. Different queues may be
//   used from different host threads, but one queue from one thread at a
//   time: an upload or download passes through its queue's staging buffer in
//   several parts, and two threads' parts would interleave there.
//   A device without real asynchrony (the host device) may run every call to
//   completion before returning; the scheduler must be correct either way.
// * Errors. Every failure throws tandem::Error naming the failing call.
#ifndef TANDEM_SCHEDULER_DEVICE_HPP
#define TANDEM_SCHEDULER_DEVICE_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"

namespace tandem {

enum class Queue { compute = 0, transfer = 1, copy = 2 };

// Handle of an event recorded on a queue; valid until the device's next allocate().
using Event = int;

class Device {
public:
    virtual ~Device() = default;

    // Human-readable name, e.g. "NVIDIA H200 #0" or "host #1".
    virtual std::string name() const = 0;

    // What the device's speed depends on, for the per-machine performance model
    // cache: e.g. "NVIDIA H200 sm_90 132 SMs driver 13000". Equal for identical devices.
    virtual std::string fingerprint() const = 0;

    // Bytes of storage the device can still give (for a clear out-of-memory error).
    virtual int64_t free_bytes() const = 0;
    // Bytes the device keeps for left factors (hold_left_factors), held now or
    // kept from an earlier hold; a hold of up to this many needs no more memory.
    virtual int64_t left_factor_bytes() const = 0;

    // Allocate row-major storage for rows x local_cols and a panel workspace
    // for panels of up to rows x max_panel_width. factor_panel() also takes one
    // square panel of up to last_panel_width columns: the trailing matrix of
    // the last step (a whole matrix in one step), factored in place and never
    // taken into a workspace.
    // Discards earlier contents.
    virtual void allocate(int64_t rows, int64_t local_cols, int max_panel_width,
                          int last_panel_width) = 0;
    void allocate(int64_t rows, int64_t local_cols, int max_panel_width) {
        allocate(rows, local_cols, max_panel_width, 0);
    }

    // Host memory suitable for asynchronous copies (pinned on a GPU); count floats.
    virtual float* host_alloc(int64_t count) = 0;
    virtual void host_free(float* ptr) = 0;

    // storage[r0 : r0+rows, c0 : c0+cols] = host block (column-major, ldh).
    virtual void upload(Queue q, const float* host, int64_t ldh, int64_t r0, int64_t c0,
                        int64_t rows, int64_t cols) = 0;
    // host block (column-major, ldh) = storage[r0 : r0+rows, c0 : c0+cols].
    virtual void download(Queue q, float* host, int64_t ldh, int64_t r0, int64_t c0,
                          int64_t rows, int64_t cols) = 0;

    // Panel workspace = the factored panel: `rows` x `width` column-major at
    // `panel` (ldp), its top width x width block holding L11 (unit diagonal
    // implied) and the rows below L21. When inv_l11 is not null it is
    // inv(L11), width x width column-major (ldi), used by form_u12(.., true).
    virtual void receive_panel(Queue q, const float* panel, int64_t ldp, int64_t rows,
                               int width, const float* inv_l11, int64_t ldi) = 0;

    // storage[r0 : r0+rows, c0 : c0+width] = the panel workspace (the panel owner's copy).
    virtual void store_panel(Queue q, int64_t r0, int64_t c0, int64_t rows, int width) = 0;

    // The device's own panel factorization (the other placement of a panel):
    // LU with partial pivoting of storage[r0 : r0+rows, c0 : c0+width] in place,
    // with LAPACK's getrf semantics (zero pivots continue). Asynchronous on q:
    // once q has passed this point, pivots[0 .. width) hold the 1-based pivot
    // rows relative to r0 and pivots[width] the info (0, or the 1-based column
    // of the first exactly zero pivot). `pivots` is host memory of width + 1
    // ints that the device can write asynchronously (from host_alloc). The
    // panel workspace is not touched: take_panel() fills it.
    virtual void factor_panel(Queue q, int64_t r0, int64_t c0, int64_t rows, int width,
                              int* pivots) = 0;
    // factor_panel for a panel that runs beside this device's trailing
    // update of the step before (update_trailing_beside_panel): a device may
    // factor it so that it needs fewer of its processors at once.
    virtual void factor_panel_beside_update(Queue q, int64_t r0, int64_t c0, int64_t rows,
                                            int width, int* pivots) {
        factor_panel(q, r0, c0, rows, width, pivots);
    }

    // inv(L11) of the panel factor_panel left at storage[r0 : r0+width, c0 :
    // c0+width], into the device's panel inverse `slot` (0 or 1), and its
    // 1-norm into *norm (host memory from host_alloc, written once q has
    // passed this point; NaN if inv(L11) holds a NaN). take_panel() and
    // take_panel_from() of that panel bring it along, for form_u12(.., true).
    // The caller orders every such copy of a slot before the next inversion
    // into it. Returns false, issuing nothing, where the device does not
    // invert panels of this width: U12 is then solved by TRSM.
    virtual bool invert_panel_l11(Queue q, int64_t r0, int64_t c0, int width, int slot,
                                  float* norm) {
        (void)q, (void)r0, (void)c0, (void)width, (void)slot, (void)norm;
        return false;
    }

    // Panel workspace = storage[r0 : r0+rows, c0 : c0+width]: the owner's
    // device-factored panel, for update_trailing and form_u12, with inv(L11)
    // where invert_panel_l11 made it for this panel (form_u12(.., true)).
    virtual void take_panel(Queue q, int64_t r0, int64_t c0, int64_t rows, int width) = 0;

    // Direct reads of another device's storage (a peer link between two GPUs):
    // whether take_panel_from() and wait_for() accept `source`. A device that
    // says no gets its panels through host memory (receive_panel).
    virtual bool can_read(Device& source) {
        (void)source;
        return false;
    }
    // Panel workspace = source's storage[r0 : r0+rows, c0 : c0+width] (a panel
    // that `source` factored), with inv(L11) as take_panel, copied once
    // `ready` (an event of source) has passed. Source must not change those elements until an
    // event recorded on q after this call has passed (see wait_for).
    virtual void take_panel_from(Queue q, Device& source, Event ready, int64_t r0, int64_t c0,
                                 int64_t rows, int width);
    // Later work on q waits for e, an event of `source` (can_read(source) holds).
    virtual void wait_for(Queue q, Device& source, Event e);

    // LAPACK laswp on local columns [c0, c0+cols): for k = k1 .. k2-1 in order,
    // swap rows k and ipiv[k]-1 (ipiv is the global, 1-based pivot array; the
    // device copies what it needs before returning).
    virtual void swap_rows(Queue q, int64_t c0, int64_t cols, int64_t k1, int64_t k2,
                           const int* ipiv) = 0;

    // U12 := inv(L11) * A12 (use_inverse, a GEMM) or solve L11 * U12 = A12 (TRSM),
    // where A12 = storage[r0 : r0+width, c0 : c0+cols] and L11 comes from the workspace.
    virtual void form_u12(Queue q, int64_t r0, int width, int64_t c0, int64_t cols,
                          bool use_inverse) = 0;

    // A22 -= L21 * U12: storage[r0+width : r0+width+rows, c0 : c0+cols] -=
    // L21 (workspace rows width .. width+rows) * storage[r0 : r0+width, c0 : c0+cols].
    // Both this and form_u12 are no-ops, whatever the workspace holds, when the
    // block they change is empty (the last panel factored in place is never in one).
    virtual void update_trailing(Queue q, int64_t r0, int width, int64_t rows, int64_t c0,
                                 int64_t cols) = 0;
    // update_trailing for a step's update (not its look-ahead) while this
    // device factors the next panel beside it (factor_panel_beside_update): a
    // device may leave some of its processors to that panel. Its `rows` are
    // that panel's rows, so the two calls can size their shares alike.
    virtual void update_trailing_beside_panel(Queue q, int64_t r0, int width, int64_t rows,
                                              int64_t c0, int64_t cols) {
        update_trailing(q, r0, width, rows, c0, cols);
    }

    // Deferred columns brought up to date with the factorization of the first
    // j columns (a left-looking step): for local columns [c0, c0+cols), apply
    // the interchanges ipiv[0 .. j) (global, 1-based; copied before returning),
    // then U = inv(L(0:j, 0:j)) A(0:j, c) and A(j:rows, c) -= L(j:rows, 0:j) U,
    // with L the unit lower factor in the left factors while they are held
    // (j <= their columns), else in the storage's first j columns: then this
    // device must hold global columns 0 .. j as its local columns 0 .. j (one
    // device), and c0 >= j. Between two allocate()s, catch-ups come on one
    // queue with non-decreasing j (a device may fold the interchanges in as j grows).
    virtual void catch_up(Queue q, int64_t c0, int64_t cols, int64_t j, const int* ipiv) = 0;

    // Left factors: a copy of L's first columns, rows 0..rows, row-major, that
    // every device keeps while blocks of the matrix are still arriving on
    // several devices, so that a block arriving after j columns were factored
    // can be caught up on a device that holds only some of those columns.
    // Room for `cols` columns (discarding what was kept); 0 stops holding them.
    // A GPU keeps the memory for the next call's hold while its memory is at
    // most half used (cudaMalloc and cudaFree of the gigabytes a large matrix
    // holds cost milliseconds each, on the call's path). Queues must be idle.
    virtual void hold_left_factors(int64_t cols) = 0;
    // Left-factor columns [j, j + w) = the panel in the workspace filled last
    // (rows j .. j + its rows, w its width; the rows above are never read):
    // the step's panel, whose rows are already in the order its own
    // interchanges leave them.
    virtual void keep_panel(Queue q, int64_t j) = 0;
    // swap_rows on left-factor columns [0, cols): the interchanges of a later
    // step, as the storage's columns left of its panel receive them.
    virtual void swap_left_factor_rows(Queue q, int64_t cols, int64_t k1, int64_t k2,
                                       const int* ipiv) = 0;

    // Solve op(A) X = B with the LU factors in storage (requires this device to
    // hold all n columns, rows 0..n). B is n x nrhs column-major on the host and
    // is overwritten with X. trans is 'N' or 'T'. Synchronous.
    virtual void solve(char trans, int64_t n, int64_t nrhs, const int* ipiv, float* b,
                       int64_t ldb) = 0;
    // One block column's part of a triangular solve with factors spread over
    // devices by block columns: global columns [j, j+w) of the n x n factors
    // are this device's local columns [c0, c0+w) (rows 0..n). X is n x nrhs
    // column-major host memory (ldx; from host_alloc for speed); with B the
    // block rows [j, j+w) of X, L and U the unit lower and upper factors and
    // K the block column [j, j+w):
    //   'N', 'L':  B = inv(L(K,K)) B;  X(j+w:n) -= L(j+w:n, K) B
    //   'N', 'U':  B = inv(U(K,K)) B;  X(0:j)   -= U(0:j, K) B
    //   'T', 'U':  B = inv(U(K,K)^T) (B - U(0:j, K)^T X(0:j))
    //   'T', 'L':  B = inv(L(K,K)^T) (B - L(j+w:n, K)^T X(j+w:n))
    // Solving with L by blocks in increasing order, then with U in decreasing
    // order ('N'), or with U^T in increasing and L^T in decreasing order
    // ('T'), solves L U X = B or U^T L^T X = B. Synchronous.
    virtual void solve_block_column(char trans, char triangle, int64_t n, int64_t j, int64_t c0,
                                    int w, int64_t nrhs, float* x, int64_t ldx) = 0;

    // Calls on a whole matrix in the caller's own column-major storage, outside
    // the blocked LU: the API's one-panel plans, where copying into the device's
    // row-major storage would cost more than the factorization. A GPU does them;
    // the defaults say that this device cannot. All are synchronous; ipiv is
    // host memory.
    //
    // sgetrf_gpu: LU of the m x n matrix `a` (lda) in this device's memory, in
    // place, with the device's panel routine. Returns LAPACK's info.
    virtual int factor_column_major(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv);
    // sgetrf on a HOST matrix: `a` is copied as it is into a buffer of the
    // device, factored there as above and copied back; the factors stay on the
    // device for solve_kept_factors until the next call that needs the buffer.
    // Where hides_host_copies(m, n), the matrix moves beside the
    // factorization (its first columns go up first, the rows of the factors
    // come back as they become final).
    virtual int factor_host_column_major(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv);
    // Whether factor_host_column_major moves an m x n matrix beside its
    // factorization rather than before and after it (the planner counts its
    // copies accordingly).
    virtual bool hides_host_copies(int64_t m, int64_t n) const;
    // Whether the last factor_host_column_major did (it copies, then factors,
    // where the device lacks the memory to do otherwise).
    virtual bool last_host_call_hid_copies() const;
    // Where it did: its parts going up ("upload", lane "<device> copy"), each
    // part's factorization ("panel", "<device> compute", after the part's
    // interchanges) and the rows of the factors going back ("download"), one
    // span per part or piece (step: its index), in seconds from the call's
    // entry. Empty where the call copied, then factored.
    virtual std::vector<TimelineSpan> last_host_call_spans() const;
    // op(A) X = B for B (host memory, overwritten with X) with the n x n
    // factors the last factor_host_column_major left on the device.
    virtual void solve_kept_factors(char trans, int64_t n, int64_t nrhs, const int* ipiv, float* b,
                                    int64_t ldb);
    // sgetrs_gpu: op(A) X = B with factors `a` (lda) and B (ldb, overwritten
    // with X) both in this device's memory.
    virtual void solve_column_major(char trans, int64_t n, int64_t nrhs, const float* a,
                                    int64_t lda, const int* ipiv, float* b, int64_t ldb);

    // What the refined solve (sgesv_refined) needs besides those: arrays of its
    // own in this device's memory (where the _gpu calls' arrays are: GPU
    // memory, host memory for an emulated device), copies, and A's products
    // in double. All synchronous.
    //
    // count floats of this device's memory (TANDEM_ERROR_OUT_OF_MEMORY if not),
    // given back with free_matrix.
    virtual float* allocate_matrix(int64_t count);
    virtual void free_matrix(float* p) noexcept;
    // The rows x cols column-major block src (lds) into dst (ldd); each of them
    // in host memory or this device's.
    virtual void copy_matrix(int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst,
                             int64_t ldd);
    // Y = A Z for the n x n A (lda) in this device's memory and Z, Y n x k in
    // host memory (ld n), products and sums in double.
    virtual void multiply_in_double(int64_t n, int64_t k, const float* a, int64_t lda,
                                    const double* z, double* y);
    // ||A||_inf = max_i sum_j |a_ij| of that A, summed in double (NaN if A
    // holds a NaN).
    virtual double norm_inf(int64_t n, const float* a, int64_t lda);

    // Event ordering between queues and with the host.
    virtual Event record(Queue q) = 0;
    virtual void wait(Queue q, Event e) = 0;      // later work on q waits for e
    virtual void synchronize(Event e) = 0;        // the host waits for e
    virtual bool query(Event e) = 0;              // whether e has completed (no waiting)
    virtual void synchronize() = 0;               // the host waits for all queues
    // Seconds from the origin event (the first record() after allocate()) to e;
    // e must have completed.
    virtual double seconds_at(Event e) = 0;
    // seconds_at of each of `events`, after waiting for every queue: a
    // timeline of thousands of events is read once the work is done, and a
    // device can then read each without waiting for it.
    virtual std::vector<double> seconds_at_each(const std::vector<Event>& events);
};

// Which panels a device's two panel-inverse slots hold (invert_panel_l11),
// so that take_panel and take_panel_from bring an inverse along with its
// panel.
class PanelInverseSlots {
public:
    void made(int slot, int64_t r0, int64_t c0, int width) { of_[slot] = {r0, c0, width}; }
    void clear() { of_[0] = of_[1] = {}; }
    // The slot holding the inverse of the panel at (r0, c0), `width` wide; -1 if none.
    int find(int64_t r0, int64_t c0, int width) const {
        for (int s = 0; s < 2; ++s)
            if (of_[s].r0 == r0 && of_[s].c0 == c0 && of_[s].width == width) return s;
        return -1;
    }

private:
    struct Panel {
        int64_t r0 = -1, c0 = -1;
        int width = 0;
    };
    Panel of_[2];
};

// Deleter for allocate_matrix's arrays.
struct FreeMatrix {
    Device* device = nullptr;
    void operator()(float* p) const noexcept {
        if (device && p) device->free_matrix(p);
    }
};

// What is wrong with a solve_block_column call on a device whose storage
// holds rows x local_cols, or "" when nothing is.
inline std::string block_column_solve_problem(char trans, char triangle, int64_t n, int64_t j,
                                              int64_t c0, int w, int64_t nrhs, const float* x,
                                              int64_t ldx, int64_t rows, int64_t local_cols) {
    if (trans != 'N' && trans != 'T') return std::string("trans '") + trans + "' is not N or T";
    if (triangle != 'L' && triangle != 'U')
        return std::string("triangle '") + triangle + "' is not L or U";
    if (n < 0 || j < 0 || w < 0 || nrhs < 0 || c0 < 0 || j + w > n || n > rows ||
        c0 + w > local_cols)
        return "block column [" + std::to_string(j) + ", " + std::to_string(j + w) + ") at local " +
               std::to_string(c0) + " of n = " + std::to_string(n) + " outside the " +
               std::to_string(rows) + " x " + std::to_string(local_cols) + " storage";
    if (nrhs > 0 && w > 0 && (x == nullptr || ldx < n))
        return "x null or ldx " + std::to_string(ldx) + " < n";
    return "";
}

// sgetrs's device route for factors in host memory: the n x n column-major
// factors (lda) into the device's storage, then op(A) X = B there (B in host
// memory, overwritten with X). The calibration times this route as the
// automatic backend takes it.
inline void solve_host_factors_on_device(Device& device, char trans, int64_t n, int64_t nrhs,
                                         const float* a, int64_t lda, const int* ipiv, float* b,
                                         int64_t ldb) {
    device.allocate(n, n, 1);
    device.upload(Queue::transfer, a, lda, 0, 0, n, n);
    device.synchronize();
    device.solve(trans, n, nrhs, ipiv, b, ldb);
}

// Whether each device can read every other one directly (false for fewer than two).
inline bool devices_read_each_other(const std::vector<Device*>& devices) {
    if (devices.size() < 2) return false;
    for (Device* reader : devices)
        for (Device* source : devices)
            if (reader != source && !reader->can_read(*source)) return false;
    return true;
}

// Defaults for devices without peer reads or whole-matrix calls: calling
// them is a scheduler bug.
inline void Device::take_panel_from(Queue, Device& source, Event, int64_t, int64_t, int64_t, int) {
    throw Error(TANDEM_ERROR_INTERNAL, name() + ": take_panel_from " + source.name() +
                                           ": no direct reads between these devices");
}
inline void Device::wait_for(Queue, Device& source, Event) {
    throw Error(TANDEM_ERROR_INTERNAL,
                name() + ": wait_for " + source.name() + ": no direct reads between these devices");
}

inline int Device::factor_column_major(int64_t, int64_t, float*, int64_t, int*) {
    throw Error(TANDEM_ERROR_INTERNAL, name() + ": factor_column_major: not a GPU");
}
inline bool Device::hides_host_copies(int64_t, int64_t) const { return false; }
inline bool Device::last_host_call_hid_copies() const { return false; }
inline std::vector<TimelineSpan> Device::last_host_call_spans() const { return {}; }
inline int Device::factor_host_column_major(int64_t, int64_t, float*, int64_t, int*) {
    throw Error(TANDEM_ERROR_INTERNAL, name() + ": factor_host_column_major: not a GPU");
}
inline void Device::solve_kept_factors(char, int64_t, int64_t, const int*, float*, int64_t) {
    throw Error(TANDEM_ERROR_INTERNAL, name() + ": solve_kept_factors: not a GPU");
}
inline void Device::solve_column_major(char, int64_t, int64_t, const float*, int64_t, const int*,
                                       float*, int64_t) {
    throw Error(TANDEM_ERROR_INTERNAL, name() + ": solve_column_major: not a GPU");
}

inline float* Device::allocate_matrix(int64_t) {
    throw Error(TANDEM_ERROR_INTERNAL, name() + ": allocate_matrix: not available on this device");
}
inline void Device::free_matrix(float*) noexcept {}
inline void Device::copy_matrix(int64_t, int64_t, const float*, int64_t, float*, int64_t) {
    throw Error(TANDEM_ERROR_INTERNAL, name() + ": copy_matrix: not available on this device");
}
inline void Device::multiply_in_double(int64_t, int64_t, const float*, int64_t, const double*,
                                       double*) {
    throw Error(TANDEM_ERROR_INTERNAL, name() + ": multiply_in_double: not available on this device");
}
inline std::vector<double> Device::seconds_at_each(const std::vector<Event>& events) {
    synchronize();
    std::vector<double> seconds;
    seconds.reserve(events.size());
    for (Event e : events) seconds.push_back(seconds_at(e));
    return seconds;
}

inline double Device::norm_inf(int64_t, const float*, int64_t) {
    throw Error(TANDEM_ERROR_INTERNAL, name() + ": norm_inf: not available on this device");
}

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_DEVICE_HPP
