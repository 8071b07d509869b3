{
  "variables": {
    "frdp_pkgs%": "freerdp2 freerdp-client2 winpr2",
    "have_openssl%": "0"
  },
  "targets": [
    {
      "target_name": "wraith_rdp",
      "sources": ["src/wraith_rdp.cc"],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!@(pkg-config --cflags-only-I <(frdp_pkgs) | sed s/-I//g)"
      ],
      "libraries": ["<!@(pkg-config --libs <(frdp_pkgs))"],
      "conditions": [
        ["OS=='linux'", {
          "ldflags": ["-Wl,-z,nodelete"]
        }]
      ],
      # NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS: while a worker is being terminated a
      # node-addon-api call can fail with nowhere to throw; without this define that is a
      # fatal napi_throw error. The addon itself checks every buffer it writes into (see
      # NewBytes in src/wraith_rdp.cc); this only keeps the remaining wrapper calls quiet.
      "defines": ["WRAITH_HAVE_OPENSSL=<(have_openssl)", "NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags_cc": ["-std=c++17", "-fvisibility=hidden", "-Wall", "-Wno-unused-parameter"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17", "-std=gnu++1y"],
      "xcode_settings": {
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "GCC_SYMBOLS_PRIVATE_EXTERN": "YES"
      }
    }
  ]
}
