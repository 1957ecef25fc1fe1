"""A small bilingual corpus for recall tests: key -> content."""

CORPUS = {
    "backup": "The nightly backup job writes to bucket mw-archive-7731 and keeps thirty days of snapshots.",
    "qx5521": "Error code QX-5521 means the license server rejected the token.",
    "qx5512": "Error code QX-5512 means the disk quota of the build agent is exceeded.",
    "qz7710": "Error code QZ-7710 appears when the VPN tunnel drops during a sync.",
    "answers": "The user prefers short answers without emojis.",
    "migrate": "部署前必须先运行数据库迁移脚本，否则服务会启动失败。",
    "peanut": "用户对花生过敏，点外卖时要避开含坚果的菜。",
    "meeting": "团队每周三下午三点开例会，地点在三楼会议室。",
    "pnpm": "Use pnpm instead of npm in the frontend repository.",
    "k8s": "The staging cluster runs Kubernetes 1.29 on three nodes.",
    "hiking": "用户周末喜欢去郊外爬山。",
    "coffee": "The user drinks green tea and avoids coffee after lunch.",
    "pgpool": "数据库连接池的最大连接数设置为 50，超时 30 秒。",
    "cert": "The TLS certificate for api.example.internal expires every 90 days and renews via certbot.",
}

# (query, expected key, kind): kind says which side should find it.
QUERIES = [
    ("QX-5521", "qx5521", "exact"),
    ("mw-archive-7731", "backup", "exact"),
    ("QZ-7710", "qz7710", "exact"),
    ("who is allergic to nuts?", "peanut", "paraphrase"),
    ("what should happen before we ship a release", "migrate", "paraphrase"),
    ("outdoor activities on the weekend", "hiking", "paraphrase"),
    ("用户喝什么饮料", "coffee", "paraphrase"),
    ("团队什么时候开会", "meeting", "mixed"),
]
