// Solves a 100 x 100 system with an installed tandem and checks the residual
// ||A x - b||_1 / (||A||_1 ||x||_1 n eps) against LAPACK's threshold of 30.
// Exit status 0 on success, 1 on failure.
#include <tandem/tandem.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

int main() {
    const int n = 100;
    std::mt19937 engine(2024);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> a(n * n), b(n);
    for (float& x : a) x = uniform(engine);
    for (float& x : b) x = uniform(engine);

    std::vector<float> lu = a, x = b;
    std::vector<int> ipiv(n);
    tandem::Report report;
    int info = -1;
    try {
        info = tandem::sgesv(n, 1, lu.data(), n, ipiv.data(), x.data(), n, {}, &report);
    } catch (const tandem::Error& e) {
        std::fprintf(stderr, "tandem::sgesv threw: %s\n", e.what());
        return 1;
    }
    if (info != 0) {
        std::fprintf(stderr, "tandem::sgesv returned info = %d\n", info);
        return 1;
    }

    double anorm = 0.0, xnorm = 0.0, rnorm = 0.0;
    for (int j = 0; j < n; ++j) {
        double column = 0.0;
        for (int i = 0; i < n; ++i) column += std::fabs(a[i + j * n]);
        anorm = std::max(anorm, column);
        xnorm += std::fabs(x[j]);
    }
    for (int i = 0; i < n; ++i) {
        double r = -double(b[i]);
        for (int j = 0; j < n; ++j) r += double(a[i + j * n]) * double(x[j]);
        rnorm += std::fabs(r);
    }
    const double eps = 0.5 * std::numeric_limits<float>::epsilon();
    const double residual = rnorm / (anorm * xnorm * n * eps);
    std::printf("tandem consumer: backend %s (%s), residual %.3g\n",
                tandem::backend_name(report.backend), report.device.c_str(), residual);
    return residual < 30.0 ? 0 : 1;
}
