// Failures injected into the device operations of a factorization: whichever
// operation fails, at whichever step, the scheduler reports a tandem::Error and
// never leaves a half-written result unannounced: either A and ipiv are exactly
// as they were, or the error says that A is partially overwritten (the factors
// are copied out while the steps run). The devices work again afterwards.
// And the process-wide state a factorization may change while it runs
// (OpenBLAS's thread count), observed from inside the device operations. One
// route's device says its work is never done, as a busy GPU would; another's
// says so every other time, so that the host copies final rows of the factors
// into A while the steps still run, as with a GPU. And blocks that reach
// several devices only after some steps have run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "scheduler/cpu_backend.hpp"
#include "scheduler/blocking_plan.hpp"
#include "scheduler/calibration.hpp"
#include "scheduler/hybrid_lu.hpp"
#include "src/model_cache.hpp"
#include "tandem/tandem.hpp"
#include "tests/test_support.hpp"

extern "C" {
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);
}

namespace tandem::test {
namespace {

// A host device whose `failing` operation throws on its `at`-th call (1-based).
class FaultyDevice final : public Device {
public:
    FaultyDevice(int index, std::string failing, int at)
        : inner_(make_host_device(index)), failing_(std::move(failing)), at_(at) {}

    std::string name() const override { return inner_->name(); }
    std::string fingerprint() const override { return inner_->fingerprint() + fingerprint_suffix; }
    int64_t free_bytes() const override { return inner_->free_bytes(); }
    int64_t left_factor_bytes() const override { return inner_->left_factor_bytes(); }
    using Device::allocate;
    void allocate(int64_t rows, int64_t cols, int max_width, int last_width) override {
        fault("allocate");
        inner_->allocate(rows, cols, max_width, last_width);
    }
    float* host_alloc(int64_t count) override { return inner_->host_alloc(count); }
    void host_free(float* p) override { inner_->host_free(p); }
    void upload(Queue q, const float* h, int64_t ldh, int64_t r0, int64_t c0, int64_t rows,
                int64_t cols) override {
        fault("upload");
        if (before_upload) before_upload();
        inner_->upload(q, h, ldh, r0, c0, rows, cols);
    }
    void download(Queue q, float* h, int64_t ldh, int64_t r0, int64_t c0, int64_t rows,
                  int64_t cols) override {
        fault("download");
        inner_->download(q, h, ldh, r0, c0, rows, cols);
    }
    void receive_panel(Queue q, const float* p, int64_t ldp, int64_t rows, int width,
                       const float* inv, int64_t ldi) override {
        fault("receive_panel");
        inner_->receive_panel(q, p, ldp, rows, width, inv, ldi);
    }
    void store_panel(Queue q, int64_t r0, int64_t c0, int64_t rows, int width) override {
        fault("store_panel");
        inner_->store_panel(q, r0, c0, rows, width);
    }
    void factor_panel(Queue q, int64_t r0, int64_t c0, int64_t rows, int width,
                      int* pivots) override {
        fault("factor_panel");
        if (recorder) recorder("panel", r0, c0, width, rows);
        inner_->factor_panel(q, r0, c0, rows, width, pivots);
    }
    void factor_panel_beside_update(Queue q, int64_t r0, int64_t c0, int64_t rows, int width,
                                    int* pivots) override {
        fault("factor_panel");
        if (recorder) recorder("panel beside", r0, c0, width, rows);
        inner_->factor_panel_beside_update(q, r0, c0, rows, width, pivots);
    }
    bool invert_panel_l11(Queue q, int64_t r0, int64_t c0, int width, int slot,
                          float* norm) override {
        fault("invert_panel_l11");
        return inner_->invert_panel_l11(q, r0, c0, width, slot, norm);
    }
    void take_panel(Queue q, int64_t r0, int64_t c0, int64_t rows, int width) override {
        fault("take_panel");
        inner_->take_panel(q, r0, c0, rows, width);
    }
    void swap_rows(Queue q, int64_t c0, int64_t cols, int64_t k1, int64_t k2,
                   const int* ipiv) override {
        fault("swap_rows");
        inner_->swap_rows(q, c0, cols, k1, k2, ipiv);
    }
    void form_u12(Queue q, int64_t r0, int width, int64_t c0, int64_t cols, bool inverse) override {
        fault("form_u12");
        inner_->form_u12(q, r0, width, c0, cols, inverse);
    }
    void update_trailing(Queue q, int64_t r0, int width, int64_t rows, int64_t c0,
                         int64_t cols) override {
        fault("update_trailing");
        if (recorder) recorder("update", r0, c0, cols, rows);
        inner_->update_trailing(q, r0, width, rows, c0, cols);
    }
    void update_trailing_beside_panel(Queue q, int64_t r0, int width, int64_t rows, int64_t c0,
                                      int64_t cols) override {
        fault("update_trailing");
        if (recorder) recorder("update beside", r0, c0, cols, rows);
        inner_->update_trailing_beside_panel(q, r0, width, rows, c0, cols);
    }
    void catch_up(Queue q, int64_t c0, int64_t cols, int64_t j, const int* ipiv) override {
        fault("catch_up");
        inner_->catch_up(q, c0, cols, j, ipiv);
    }
    void hold_left_factors(int64_t cols) override {
        fault("hold_left_factors");
        inner_->hold_left_factors(cols);
    }
    void keep_panel(Queue q, int64_t j) override {
        fault("keep_panel");
        inner_->keep_panel(q, j);
    }
    void swap_left_factor_rows(Queue q, int64_t cols, int64_t k1, int64_t k2,
                               const int* ipiv) override {
        fault("swap_left_factor_rows");
        inner_->swap_left_factor_rows(q, cols, k1, k2, ipiv);
    }
    void solve(char trans, int64_t n, int64_t nrhs, const int* ipiv, float* b, int64_t ldb) override {
        inner_->solve(trans, n, nrhs, ipiv, b, ldb);
    }
    void solve_block_column(char trans, char triangle, int64_t n, int64_t j, int64_t c0, int w,
                            int64_t nrhs, float* x, int64_t ldx) override {
        fault("solve_block_column");
        inner_->solve_block_column(trans, triangle, n, j, c0, w, nrhs, x, ldx);
    }
    // Peer reads between two faulty devices are their host devices' own.
    bool can_read(Device& source) override {
        auto* other = dynamic_cast<FaultyDevice*>(&source);
        return other != nullptr && inner_->can_read(*other->inner_);
    }
    void take_panel_from(Queue q, Device& source, Event ready, int64_t r0, int64_t c0, int64_t rows,
                         int width) override {
        fault("take_panel_from");
        inner_->take_panel_from(q, *dynamic_cast<FaultyDevice&>(source).inner_, ready, r0, c0, rows,
                                width);
    }
    void wait_for(Queue q, Device& source, Event e) override {
        inner_->wait_for(q, *dynamic_cast<FaultyDevice&>(source).inner_, e);
    }
    Event record(Queue q) override { return inner_->record(q); }
    void wait(Queue q, Event e) override { inner_->wait(q, e); }
    void synchronize(Event e) override { inner_->synchronize(e); }
    bool query(Event e) override {
        if (hesitant && ++queries_ % 2 == 1) return false;
        return !busy && inner_->query(e);
    }
    void synchronize() override { inner_->synchronize(); }
    double seconds_at(Event e) override { return inner_->seconds_at(e); }
    std::vector<double> seconds_at_each(const std::vector<Event>& events) override {
        return inner_->seconds_at_each(events);
    }

    int calls() const { return calls_; }
    void disarm() { failing_.clear(); }
    // Called with the operation's name at each faultable operation.
    std::function<void(const char*)> observer;
    // Called at each panel factorization and trailing update, with what it
    // is ("panel", "panel beside", "update", "update beside"), its first row
    // r0, first column c0, and width or columns.
    // A panel's or an update's call: its first row and column, its columns,
    // and its rows (a panel's, or those of the L21 an update multiplies).
    std::function<void(const std::string& what, int64_t r0, int64_t c0, int64_t cols, int64_t rows)>
        recorder;
    // Called before each upload, on the thread that uploads (several devices:
    // the device's feeder), which it may hold back.
    std::function<void()> before_upload;
    // Makes the device another kind of device to the model cache.
    std::string fingerprint_suffix;
    // Every query() says "not yet", as a GPU's would while it computes: the
    // host then uploads every block it can while it waits for a panel, and
    // copies the factors out only at the end.
    bool busy = false;
    // Every other query() says "not yet", the others the truth: while the
    // host waits for a panel it uploads blocks and, once they are all up,
    // copies final rows of the factors into A (MatrixStream::advance).
    bool hesitant = false;

private:
    void fault(const char* op) {
        if (observer) observer(op);
        if (failing_.empty() || failing_ != op || ++calls_ != at_) return;
        throw Error(TANDEM_ERROR_INTERNAL, name() + ": " + op + ": injected failure");
    }
    std::unique_ptr<Device> inner_;
    std::string failing_;
    int at_;
    int calls_ = 0;
    int64_t queries_ = 0;
};

// `lu` factors a copy of the n x n matrix a: info 0 and LAPACK's residual
// test passed. Returns the call's report.
Report factor_and_check(HybridLU& lu, int n, const std::vector<float>& a) {
    std::vector<float> factors = a;
    std::vector<int> ipiv(static_cast<size_t>(n));
    Report report;
    EXPECT_EQ(lu.factor(n, n, factors.data(), n, ipiv.data(), report), 0);
    EXPECT_LT(factorization_residual(n, n, a.data(), n, factors.data(), n, ipiv.data()),
              kResidualBound);
    return report;
}

struct Route {
    const char* name;
    int devices;
    PanelSite site;
    bool stream;
    bool peer_panels = true;  // device panels read device to device where the devices can
    bool busy = false;        // FaultyDevice::busy
    bool hesitant = false;    // FaultyDevice::hesitant
};

TEST(SchedulerFaults, EveryOperationFailingLeavesAUntouchedOrSaysSo) {
    const int n = 120;
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, test_seed());
    const char* operations[] = {"allocate",     "upload",       "download",   "receive_panel",
                                "store_panel",  "factor_panel", "take_panel", "take_panel_from",
                                "swap_rows",    "form_u12",     "update_trailing", "catch_up",
                                "hold_left_factors", "keep_panel", "swap_left_factor_rows",
                                "invert_panel_l11"};
    const Route routes[] = {{"one device, CPU panels, streamed", 1, PanelSite::cpu, true},
                            {"one device, device panels, streamed", 1, PanelSite::device, true},
                            {"one device, device panels, eager", 1, PanelSite::device, false},
                            {"two devices, CPU panels", 2, PanelSite::cpu, true},
                            {"two devices, device panels", 2, PanelSite::device, true},
                            {"two devices, device panels through the host", 2, PanelSite::device, true,
                             false},
                            {"one busy device, device panels, streamed", 1, PanelSite::device, true, true,
                             true},
                            {"one hesitant device, device panels, streamed", 1, PanelSite::device, true,
                             true, false, true}};
    int failures_seen = 0;
    int written_before_failing = 0;  // the hesitant route's failures after rows reached A
    for (const Route& route : routes)
        for (const char* op : operations)
            // The hesitant device's gathers start once every block is up (step
            // 3): a later failure too (swap_rows and update_trailing reach
            // their 12th call in step 5).
            for (int at : route.hesitant ? std::vector<int>{1, 3, 12} : std::vector<int>{1, 3}) {
                SCOPED_TRACE(std::string(route.name) + ", " + op + " failing at call " +
                             std::to_string(at));
                std::vector<std::unique_ptr<FaultyDevice>> owned;
                std::vector<Device*> devices;
                for (int d = 0; d < route.devices; ++d) {
                    owned.push_back(std::make_unique<FaultyDevice>(d, d == route.devices - 1 ? op : "", at));
                    owned.back()->busy = route.busy;
                    owned.back()->hesitant = route.hesitant;
                    devices.push_back(owned.back().get());
                }
                HybridSettings settings;
                settings.block_size = 16;
                settings.sites.assign((n + 15) / 16, route.site);
                settings.stream_matrix = route.stream;
                settings.peer_panels = route.peer_panels;
                HybridLU lu(devices, settings);
                std::vector<float> out = a;
                std::vector<int> ipiv(n, -7);
                Report report;
                bool threw = false;
                try {
                    EXPECT_EQ(lu.factor(n, n, out.data(), n, ipiv.data(), report), 0);
                } catch (const Error& e) {
                    threw = true;
                    const std::string what = e.what();
                    EXPECT_NE(what.find("injected failure"), std::string::npos) << what;
                    if (lu.wrote_output()) {
                        EXPECT_NE(what.find("partially overwritten"), std::string::npos) << what;
                        // A failing download has set wrote_output before it
                        // wrote anything: count only the other operations.
                        written_before_failing += route.hesitant && std::string(op) != "download";
                    } else {
                        EXPECT_EQ(first_bit_difference(out, a), -1) << what;
                    }
                    EXPECT_EQ(ipiv, std::vector<int>(n, -7)) << "ipiv is written only on success";
                } catch (...) {
                    ADD_FAILURE() << "an exception other than tandem::Error";
                    threw = true;
                }
                const bool called = owned.back()->calls() >= at;
                EXPECT_EQ(threw, called) << "a failure must surface, and only a real one";
                failures_seen += threw;
                // The same devices factor correctly afterwards.
                for (auto& device : owned) device->disarm();
                HybridLU fresh(devices, settings);
                factor_and_check(fresh, n, a);
            }
    EXPECT_GT(failures_seen, 50) << failures_seen;  // most operations are reached on most routes
    EXPECT_GT(written_before_failing, 0) << "no row of the factors reached A while the steps ran";
}

// The solve by block columns on two devices, failing in either device's
// part: the Error surfaces and B is as it was (X is written back only once
// every block has been solved); the same factors then solve correctly.
TEST(SchedulerFaults, SolveByBlockColumnsFailingLeavesBUntouched) {
    const int n = 100, nrhs = 3;
    const uint64_t seed = test_seed();
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
    const std::vector<float> b = make_matrix(n, nrhs, n, MatrixKind::random, seed + 1);
    for (int failing_device : {0, 1})
        for (int at : {1, 4, 6}) {
            SCOPED_TRACE("device " + std::to_string(failing_device) + " failing at call " +
                         std::to_string(at));
            std::vector<std::unique_ptr<FaultyDevice>> owned;
            std::vector<Device*> devices;
            for (int d = 0; d < 2; ++d) {
                owned.push_back(std::make_unique<FaultyDevice>(
                    d, d == failing_device ? "solve_block_column" : "", at));
                devices.push_back(owned.back().get());
            }
            HybridSettings settings;
            settings.block_size = 16;  // 7 blocks: 4 on device 0, 3 on device 1, a call each a triangle
            HybridLU lu(devices, settings);
            std::vector<float> factors = a;
            std::vector<int> ipiv(n);
            Report report;
            ASSERT_EQ(lu.factor(n, n, factors.data(), n, ipiv.data(), report), 0);
            std::vector<float> x = b;
            bool threw = false;
            try {
                lu.solve('N', nrhs, x.data(), n);
            } catch (const Error& e) {
                threw = true;
                EXPECT_NE(std::string(e.what()).find("injected failure"), std::string::npos);
            }
            EXPECT_TRUE(threw);  // the devices have 8 and 6 calls
            EXPECT_EQ(first_bit_difference(x, b), -1);
            owned[failing_device]->disarm();
            x = b;
            lu.solve('N', nrhs, x.data(), n);
            EXPECT_LT(solve_residual(n, nrhs, a.data(), n, x.data(), n, b.data(), n), kResidualBound);
        }
}

// A block column outside the storage, or a transpose or triangle that is not
// one, is a scheduler bug: tandem::Error, and X untouched.
TEST(SchedulerFaults, SolveBlockColumnRejectsWhatIsNotThere) {
    std::unique_ptr<Device> device = make_host_device(0);
    device->allocate(8, 4, 4);
    std::vector<float> x(8, 1.0f);
    auto rejects = [&](char trans, char triangle, int64_t n, int64_t j, int64_t c0, int w,
                       int64_t ldx) {
        EXPECT_THROW(device->solve_block_column(trans, triangle, n, j, c0, w, 1, x.data(), ldx),
                     Error);
        EXPECT_EQ(x, std::vector<float>(8, 1.0f));
    };
    rejects('C', 'L', 8, 0, 0, 4, 8);  // 'C' is the API's, not the device's
    rejects('N', 'X', 8, 0, 0, 4, 8);
    rejects('N', 'L', 9, 0, 0, 4, 9);  // more rows than the storage
    rejects('N', 'L', 8, 6, 0, 4, 8);  // past n
    rejects('N', 'U', 8, 0, 2, 4, 8);  // past the local columns
    rejects('T', 'U', 8, 0, 0, 4, 7);  // ldx < n
    device->allocate(8, 0, 4);          // a device with no columns has no block column
    rejects('N', 'L', 8, 0, 0, 1, 8);
}

// A step's update runs beside the next panel when the step looks ahead and
// the next panel is factored by the device that updates: the update then
// says so (update_trailing_beside_panel), and the panel too
// (factor_panel_beside_update), exactly when that device updates columns
// beyond the look-ahead's in that step; never the look-ahead's own columns,
// which the panel waits for, nor the first panel, nor a CPU panel's step,
// nor anything without look-ahead. Eager and streamed transfers, one device
// and two, device panels and alternating sites.
// Several devices, the matrix streamed, the upload of each block in the first
// half of the columns held back until the steps have factored all but two of
// the panels before it: the blocks from the fourth on go live after columns
// have been factored, each caught up with the copy of L's first columns that
// every device keeps while blocks arrive. That copy has room for half the
// columns here, and once the next panel would pass it the steps wait for every
// block, so no later block is held back. The factors pass LAPACK's residual
// test, the timeline shows the catch-ups and the kept panels, no hold runs
// out, and the same devices factor again.
TEST(SchedulerStreams, BlocksArrivingLateOnSeveralDevicesAreCaughtUp) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 200, nb = 16;  // 13 blocks
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
    for (int count : {2, 3})
        for (PanelSite site : {PanelSite::device, PanelSite::cpu}) {
            SCOPED_TRACE(std::to_string(count) + " devices, panels on the " +
                         (site == PanelSite::cpu ? "CPU" : "devices"));
            std::atomic<int> panels{0};  // factored or stored so far, one a step
            std::atomic<int> stalls{0};  // holds that ran out before their panels were done
            std::vector<std::unique_ptr<FaultyDevice>> owned;
            std::vector<Device*> devices;
            for (int d = 0; d < count; ++d) {
                owned.push_back(std::make_unique<FaultyDevice>(d, "", 0));
                owned.back()->observer = [&panels](const char* op) {
                    const std::string what = op;
                    if (what == "factor_panel" || what == "store_panel") ++panels;
                };
                // Upload u of device d is its u-th block, held back (within
                // the first half of the columns) until the panels before it
                // but two are done. Step k needs block k + 1 and has k panels
                // done; the wait for every block comes at the end of step 5,
                // with 6 or 7 panels done, and the last held block (6) needs
                // 4. So the steps never wait for a block that is held back.
                const BlockingPlan plan(n, n, nb, count);
                const std::vector<int64_t> mine = plan.blocks_of(d);
                owned.back()->before_upload = [&panels, &stalls, mine, plan, u = size_t(0)]() mutable {
                    const int64_t block = mine.at(u++);
                    if (plan.block_begin(block) > n / 2) return;
                    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
                    while (panels.load() < block - 2) {
                        if (std::chrono::steady_clock::now() >= give_up) {
                            ++stalls;
                            break;
                        }
                        std::this_thread::sleep_for(std::chrono::microseconds(50));
                    }
                };
                devices.push_back(owned.back().get());
            }
            HybridSettings settings;
            settings.block_size = nb;
            settings.sites.assign((n + nb - 1) / nb, site);
            settings.stream_matrix = true;
            HybridLU hybrid(devices, settings);
            const Report report = factor_and_check(hybrid, n, a);
            auto spans = [&](const char* phase) {
                return std::count_if(report.timeline.begin(), report.timeline.end(),
                                     [&](const TimelineSpan& s) { return s.phase == phase; });
            };
            EXPECT_GE(spans("catch up"), 1) << "no block arrived late";
            EXPECT_EQ(stalls.load(), 0) << "the steps waited for a block held back";
            EXPECT_GE(spans("keep L"), count) << "no device kept a panel of L";
            for (auto& device : owned) device->before_upload = nullptr;
            factor_and_check(hybrid, n, a);
        }
}

TEST(SchedulerSteps, OnlyTheUpdateBesideTheNextPanelSaysSo) {
    const int n = 160, nb = 16, steps = n / nb;
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, test_seed());
    struct Case {
        const char* name;
        int devices;
        bool stream;
        bool alternate;  // CPU panels on odd steps
        int lookahead;
        bool busy = false;  // FaultyDevice::busy: the host uploads blocks while it waits
    };
    const Case cases[] = {{"one device, eager", 1, false, false, 1},
                          {"one device, eager, no look-ahead", 1, false, false, 0},
                          {"one device, streamed", 1, true, false, 1},
                          {"one busy device, streamed", 1, true, false, 1, true},
                          {"one device, CPU panels on odd steps", 1, false, true, 1},
                          {"two devices, eager", 2, false, false, 1},
                          {"two devices, streamed", 2, true, false, 1}};
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        struct Call {
            int device;
            std::string what;
            int64_t r0, c0, cols, rows;
        };
        std::vector<Call> calls;
        std::vector<std::unique_ptr<FaultyDevice>> owned;
        std::vector<Device*> devices;
        for (int d = 0; d < c.devices; ++d) {
            owned.push_back(std::make_unique<FaultyDevice>(d, "", 0));
            owned.back()->busy = c.busy;
            owned.back()->recorder = [&calls, d](const std::string& what, int64_t r0, int64_t c0,
                                                 int64_t cols, int64_t rows) {
                calls.push_back({d, what, r0, c0, cols, rows});
            };
            devices.push_back(owned.back().get());
        }
        HybridSettings settings;
        settings.block_size = nb;
        settings.sites.assign(steps, PanelSite::device);
        if (c.alternate)
            for (int k = 1; k < steps; k += 2) settings.sites[k] = PanelSite::cpu;
        settings.lookahead = c.lookahead;
        settings.stream_matrix = c.stream;
        HybridLU lu(devices, settings);
        std::vector<float> out = a;
        std::vector<int> ipiv(n);
        Report report;
        ASSERT_EQ(lu.factor(n, n, out.data(), n, ipiv.data(), report), 0);
        EXPECT_LT(factorization_residual(n, n, a.data(), n, out.data(), n, ipiv.data()), kResidualBound);
        // Per step k (first row r0 = k nb): the devices whose non-empty
        // updates said "beside", and the device whose panel k+1 said so.
        std::vector<std::vector<int>> updated_beside(steps);
        std::vector<int> panel_beside(steps, -1);
        int device_panels = 0, beside_calls = 0;
        for (const Call& call : calls) {
            const int64_t k = call.r0 / nb;
            if (call.what == "panel" || call.what == "panel beside") ++device_panels;
            if (call.what == "panel beside") {
                ++beside_calls;
                ASSERT_GT(k, 0) << "the first panel runs alone";
                EXPECT_EQ(panel_beside[k - 1], -1);
                panel_beside[k - 1] = call.device;
                // The device sizes its share of the SMs by these rows on both
                // sides (CudaDevice::PanelShare): those below step k-1's panel.
                EXPECT_EQ(call.rows, n - k * nb);
            } else if (call.what == "update beside" && call.cols > 0) {
                ++beside_calls;
                if (c.devices == 1) {
                    EXPECT_GE(call.c0, call.r0 + 2 * nb) << "never the look-ahead's columns";
                }
                updated_beside[k].push_back(call.device);
                EXPECT_EQ(call.rows, n - (k + 1) * nb) << "the rows of the next panel";
            }
        }
        int expected_device_panels = 0;
        for (const PanelSite site : settings.sites) expected_device_panels += site == PanelSite::device;
        EXPECT_EQ(device_panels, expected_device_panels);
        for (int k = 0; k < steps; ++k) {
            SCOPED_TRACE("step " + std::to_string(k));
            const bool next_on_device = k + 1 < steps && settings.sites[k + 1] == PanelSite::device;
            if (c.lookahead == 0 || !next_on_device) {
                EXPECT_EQ(panel_beside[k], -1);
                EXPECT_TRUE(updated_beside[k].empty());
                continue;
            }
            // The panel said "beside" exactly when its owner's update did.
            for (const int d : updated_beside[k]) EXPECT_EQ(d, panel_beside[k]) << "only the panel's owner";
            if (panel_beside[k] >= 0) { EXPECT_FALSE(updated_beside[k].empty()); }
            if (!c.stream && c.devices == 1) {
                EXPECT_EQ(panel_beside[k] >= 0, k + 2 < steps) << "eager: every step but the last two";
            }
        }
        // One idle device streamed keeps only the next blocks on the device:
        // nothing beyond the look-ahead's columns, nothing beside.
        if (c.lookahead > 0 && !(c.stream && c.devices == 1 && !c.busy)) {
            EXPECT_GT(beside_calls, 0);
        }
    }
}

// OpenBLAS's thread count is process-wide: a plan of device panels alone
// leaves it as the application set it while the steps run; a plan with CPU
// panels holds it at one (their OpenMP team competes with OpenBLAS's spinning
// threads) and gives the application's count back at the end.
TEST(SchedulerGlobalState, OpenBlasThreadsChangeOnlyWhileCpuPanelsMayRun) {
    const int n = 96;
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, test_seed());
    const int application_threads = 2;
    const int before = openblas_get_num_threads();
    openblas_set_num_threads(application_threads);
    if (openblas_get_num_threads() != application_threads) {
        openblas_set_num_threads(before);
        GTEST_SKIP() << "this OpenBLAS runs one thread only";
    }
    for (const PanelSite site : {PanelSite::device, PanelSite::cpu}) {
        SCOPED_TRACE(site == PanelSite::device ? "device panels" : "CPU panels");
        FaultyDevice device(0, "", 0);
        std::vector<int> seen;
        device.observer = [&](const char* op) {
            if (std::string(op) == "update_trailing") seen.push_back(openblas_get_num_threads());
        };
        std::vector<Device*> devices = {&device};
        HybridSettings settings;
        settings.block_size = 16;
        settings.sites.assign((n + 15) / 16, site);
        HybridLU lu(devices, settings);
        std::vector<float> out = a;
        std::vector<int> ipiv(n);
        Report report;
        ASSERT_EQ(lu.factor(n, n, out.data(), n, ipiv.data(), report), 0);
        ASSERT_FALSE(seen.empty());
        const int expected = site == PanelSite::device ? application_threads : 1;
        for (const int threads : seen) EXPECT_EQ(threads, expected);
        EXPECT_EQ(openblas_get_num_threads(), application_threads) << "given back at the end";
    }
    openblas_set_num_threads(before);
}

}  // namespace
}  // namespace tandem::test

namespace tandem::test {
namespace {

// A calibration holds no lock that calls for another kind of device, plans
// or release_resources() need: while one device's calibration is held up
// inside a device operation, another device's model is calibrated, planned
// with and forgotten.
TEST(SchedulerGlobalState, CalibrationHoldsNoLockOthersNeed) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("tandem-lock-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    detail::forget_machine_models();
    CalibrationGrid grid;
    grid.panel_rows = {64, 256};
    grid.widths = {8, 16};
    grid.update_sizes = {32, 64};
    grid.whole_sizes = {32, 64};
    grid.repeats = 1;
    FaultyDevice held(0, "", 0);
    held.fingerprint_suffix = " (held)";
    std::promise<void> entered, release;
    std::shared_future<void> released = release.get_future().share();
    std::atomic<bool> first_op{true};
    held.observer = [&](const char*) {
        if (first_op.exchange(false)) {
            entered.set_value();
            released.wait();
        }
    };
    auto calibration = std::async(std::launch::async, [&] {
        return detail::machine_model(held, PanelMethod::recursive, dir.string(), false, grid);
    });
    entered.get_future().wait();
    auto others = std::async(std::launch::async, [&] {
        const auto other = make_host_device(1);
        const detail::ModelSource m =
            detail::machine_model(*other, PanelMethod::recursive, dir.string(), false, grid);
        StepPlanRequest request;
        request.m = request.n = 256;
        detail::machine_plan(m.model, request);
        detail::forget_machine_models();
        return m.origin;
    });
    // A guard against a hang, not a timing: the other calls need no lock the held one has.
    const bool done = others.wait_for(std::chrono::seconds(120)) == std::future_status::ready;
    release.set_value();
    EXPECT_TRUE(done) << "the other device's calls waited for the held calibration";
    EXPECT_EQ(others.get().rfind("calibrated", 0), 0u);
    EXPECT_TRUE(calibration.get().model.complete());
    detail::forget_machine_models();
    fs::remove_all(dir);
}

}  // namespace
}  // namespace tandem::test
