// CudaDevice: panels read straight from another GPU's memory (peer access over
// NVLink or PCIe). With several GPUs, a panel factored on its owner otherwise
// goes owner -> host -> every other GPU: two bus crossings and the host's
// attention on the critical path of every step.
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_device.hpp"

namespace tandem::gpu {

bool CudaDevice::can_read(Device& source) {
    auto* peer = dynamic_cast<CudaDevice*>(&source);
    if (peer == nullptr || peer == this || peer->ordinal_ == ordinal_) return false;
    const auto known = peer_readable_.find(peer->ordinal_);
    if (known != peer_readable_.end()) return known->second;
    DeviceGuard guard(ordinal_);
    int possible = 0;
    TANDEM_CUDA_CHECK(cudaDeviceCanAccessPeer(&possible, ordinal_, peer->ordinal_));
    if (possible) {
        // Peer access is a property of the context, kept for the process: another
        // device object (or the caller) may have enabled it already.
        const cudaError_t status = cudaDeviceEnablePeerAccess(peer->ordinal_, 0);
        if (status == cudaErrorPeerAccessAlreadyEnabled)
            (void)cudaGetLastError();  // not an error here; clear it
        else
            TANDEM_CUDA_CHECK(status);
    }
    peer_readable_[peer->ordinal_] = possible != 0;
    return possible != 0;
}

void CudaDevice::take_panel_from(Queue q, Device& source, Event ready, int64_t r0, int64_t c0,
                                 int64_t rows, int width) {
    if (!can_read(source))
        contract_error("take_panel_from", "cannot read " + source.name() + " directly");
    auto& peer = static_cast<CudaDevice&>(source);
    peer.check_block("take_panel_from (source)", r0, c0, rows, width);
    if (rows > rows_ || width > max_width_)
        contract_error("take_panel_from", "a " + std::to_string(rows) + " x " +
                                              std::to_string(width) + " panel does not fit the " +
                                              std::to_string(rows_) + " x " +
                                              std::to_string(max_width_) + " workspace");
    DeviceGuard guard(ordinal_);
    // Host-side bookkeeping at issue time, as in receive_panel.
    next_workspace();
    panel_rows_ = rows;
    panel_width_ = width;
    has_inverse_ = false;
    TANDEM_CUDA_CHECK(cudaStreamWaitEvent(stream(q), peer.event(ready), 0));
    if (rows == 0 || width == 0) return;
    // Unified addressing: the copy engine reads the peer's rows directly.
    TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(panel_workspace(), sizeof(float) * panel_ld_,
                                        peer.at(r0, c0), sizeof(float) * peer.ld_,
                                        sizeof(float) * width, rows, cudaMemcpyDefault,
                                        stream(q)));
    bring_inverse(q, peer, r0, c0, rows, width);
}

void CudaDevice::wait_for(Queue q, Device& source, Event e) {
    if (!can_read(source)) contract_error("wait_for", "cannot order after " + source.name());
    DeviceGuard guard(ordinal_);
    TANDEM_CUDA_CHECK(cudaStreamWaitEvent(stream(q), static_cast<CudaDevice&>(source).event(e), 0));
}

}  // namespace tandem::gpu
