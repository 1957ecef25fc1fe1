"""Calibration sentences for the language centroids of the dense space (SPEC §4).

Multilingual embeddings carry a strong language component: a Chinese text sits closer to
every other Chinese text than to the English text that says the same thing. The mean
vector of each language (per e5 prefix) is estimated from the neutral sentences below —
general statements about everyday things, deliberately *not* memories of any user, so the
centroid describes the language and not the content a store happens to hold. They are
embedded at model build (`model_build.build_centroids`) with both prefixes, and the
centroids are stored in the model manifest.

Changing these sentences changes the centroids, hence the embedding space: indexes are
then rebuilt in the background (see `embedding.space_id`).
"""

from __future__ import annotations

import hashlib
import json

EN = [
    "The train was ten minutes late this morning.",
    "Rain is expected for most of the weekend.",
    "The library closes early on public holidays.",
    "She bought a new pair of running shoes.",
    "The museum has a large collection of old maps.",
    "A cup of hot soup is nice on a cold day.",
    "The river flows slowly through the valley.",
    "Children were playing football in the park.",
    "The bakery on the corner sells fresh bread every day.",
    "He forgot his umbrella at the office.",
    "The price of vegetables went up last month.",
    "Most birds leave the lake before winter.",
    "The film was longer than anyone expected.",
    "A new bridge is being built across the harbour.",
    "The meeting room on the second floor has no windows.",
    "Mountains in the north are covered with snow until May.",
    "The old computer makes a loud noise when it starts.",
    "They painted the kitchen a light shade of green.",
    "Traffic is heavy near the stadium after a match.",
    "The recipe needs two eggs and a spoon of sugar.",
    "Software updates sometimes change how menus look.",
    "The hotel offers breakfast from seven to ten.",
    "A good night's sleep helps people concentrate.",
    "The garden is full of flowers in spring.",
    "Phones lose battery faster in very cold weather.",
    "The shop accepts cards but not cheques.",
    "Many people learn a second language at school.",
    "The bus stop was moved to the other side of the road.",
    "An email with a large attachment may be rejected.",
    "The teacher explained the exercise twice.",
    "Coffee prices depend on the harvest in several countries.",
    "The city replaced its street lights with LED lamps.",
    "A spreadsheet can sort rows by any column.",
    "The ferry does not run when the sea is rough.",
    "Old newspapers are collected for recycling on Tuesdays.",
    "The printer on this floor is often out of paper.",
    "Walking every day is good for the heart.",
    "The concert was cancelled because of the storm.",
    "The airport has a new terminal for short flights.",
    "A map on the wall shows the whole building.",
    "Servers in a data centre need constant cooling.",
    "The report has a summary on the first page.",
    "Tomatoes grow best with plenty of sunlight.",
    "The password field hides what is typed.",
    "The village holds a market every Saturday.",
    "Most keyboards have a separate row of number keys.",
    "The road to the beach is closed for repairs.",
    "A calendar helps keep track of appointments.",
]

ZH = [
    "今天早上的火车晚点了十分钟。",
    "这个周末大部分时间都会下雨。",
    "图书馆在节假日会提前关门。",
    "她买了一双新的跑步鞋。",
    "博物馆里收藏了很多老地图。",
    "冷天喝一碗热汤很舒服。",
    "河水缓缓流过山谷。",
    "孩子们在公园里踢足球。",
    "街角的面包店每天都卖新鲜面包。",
    "他把雨伞忘在办公室了。",
    "上个月蔬菜的价格涨了。",
    "大多数鸟在冬天来临前离开湖边。",
    "这部电影比大家想象的要长。",
    "港口上正在修建一座新桥。",
    "二楼的会议室没有窗户。",
    "北方的山到五月还被积雪覆盖。",
    "那台旧电脑开机时声音很大。",
    "他们把厨房刷成了浅绿色。",
    "比赛结束后体育场附近交通很拥堵。",
    "这道菜需要两个鸡蛋和一勺糖。",
    "软件更新有时会改变菜单的样子。",
    "酒店早餐从七点供应到十点。",
    "睡个好觉有助于集中注意力。",
    "春天的花园里开满了花。",
    "天气很冷时手机掉电更快。",
    "这家店可以刷卡，但不收支票。",
    "很多人在学校学习第二门语言。",
    "公交车站搬到了马路对面。",
    "附件太大的邮件可能会被退回。",
    "老师把练习讲了两遍。",
    "咖啡的价格取决于几个国家的收成。",
    "城市把路灯换成了 LED 灯。",
    "电子表格可以按任意一列排序。",
    "海上风浪大的时候渡轮停航。",
    "旧报纸每周二统一回收。",
    "这一层的打印机经常没纸。",
    "每天散步对心脏有好处。",
    "音乐会因为暴风雨取消了。",
    "机场为短途航班新建了一座航站楼。",
    "墙上的地图显示了整栋大楼。",
    "数据中心的服务器需要持续降温。",
    "报告的第一页是摘要。",
    "西红柿在阳光充足的地方长得最好。",
    "密码输入框会隐藏输入的内容。",
    "村子每个星期六都有集市。",
    "大多数键盘都有单独的一排数字键。",
    "去海滩的路因为维修封闭了。",
    "日历可以帮人记住各种约会。",
]


def digest() -> str:
    """A short hash of the sentences: part of the embedding-space id."""
    return hashlib.sha256(json.dumps([EN, ZH], ensure_ascii=False).encode("utf-8")).hexdigest()[:12]
