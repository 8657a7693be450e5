"""The labelled set of :mod:`benchmarks.faithfulness`: short policy-like documents, English and
Korean, written for this purpose, and sentences about each: true ones (a line copied, a line
reworded, the same figures in other words, the same rule said the other way: "only when" for
"not, except when") and planted errors, one of each kind per document.

An item is (document id, sentence, label); the label is ``true`` or the kind of error:

* ``number``: a figure changed (30 days -> 37 days, 6만 원 -> 7만 원);
* ``name``: a person, team or product swapped for another;
* ``negation``: the statement turned round (may -> may not, 필요합니다 -> 필요하지 않습니다);
* ``invented``: a policy the document never states, with a figure, as a writer invents one;
* ``date``: a date changed, written as the document writes dates or the other way.

A document's id starts with its language (``en-``, ``ko-``); its first line is its title.
"""

# ruff: noqa: E501  (one labelled item a line reads best; a few sentences are long)

from __future__ import annotations

KINDS = ("true", "number", "name", "negation", "invented", "date")

DOCUMENTS: dict[str, str] = {
    "en-leave": """Annual Leave Policy
Owner: People team, John Park. Last updated 2026-01-15.
Every full-time employee receives 25 days of paid annual leave per calendar year.
Leave requests of more than 3 days must be submitted at least 10 business days in advance.
Requests are approved by the employee's line manager in the HR portal.
Up to 5 unused days may be carried over to the next year.
Carried-over days expire on March 31, 2027 if they are not used.
Leave cannot be paid out in cash, except when an employee leaves the company.
Sick leave is separate and does not reduce annual leave.""",
    "en-expenses": """Expense Claims
Finance team, reviewed by Maria Kim on 2026-02-01.
Employees submit expense claims in Spendwise within 30 days of the purchase.
Every claim over 50 euros needs an itemised receipt.
Claims above 1,000 euros must also be approved by the department head.
The daily meal allowance on business trips is 60 euros.
Approved claims are reimbursed with the next monthly salary.
Alcohol and personal entertainment are never reimbursed.""",
    "en-laptops": """Laptop Refresh Programme
Run by the IT Operations team; contact: Daniel Ortiz.
Engineers receive a new laptop every 3 years, other staff every 4 years.
The standard model is the ThinkPad X1 Carbon with 32 GB of memory.
Requests for the 2026 refresh open on April 1, 2026 and close on April 30, 2026.
Old laptops must be returned to IT within 14 days of receiving the new one.
Lost laptops are replaced once; a second loss is charged at 400 euros.
Personal data is not copied to the new laptop by IT.""",
    "en-oncall": """On-call Rotation
Platform team, maintained by Sara Lindqvist.
Each engineer is on call for one week at a time, starting on Monday at 10:00.
The on-call engineer must acknowledge a page within 15 minutes.
Severity 1 incidents are escalated to the engineering manager after 30 minutes.
On-call weeks are compensated with 200 euros per week.
Engineers are on call at most 6 weeks per year.
Swaps are allowed but must be recorded in PagerDuty before the shift starts.
New engineers do not join the rotation during their first 2 months.
The 2026 rotation starts on March 2, 2026.""",
    "en-security": """Password and Access Policy
Security team, approved by Kevin Brandt on 2026-03-10.
Passwords must be at least 14 characters long.
Two-factor authentication with the Authy app is required for every account.
Passwords are not rotated on a schedule; they are changed only after a suspected leak.
Access to production is reviewed every 90 days by the service owner.
Accounts of people who leave are disabled within 24 hours.
Shared accounts are forbidden.
Security incidents must be reported to security@example.com within 1 hour.""",
    "en-travel": """Business Travel Policy
Travel desk, contact Emma Schulz.
Flights are booked through TravelPerk at least 21 days before departure.
Economy class is used for flights under 6 hours; business class may be booked above that.
Hotel costs are covered up to 180 euros per night in Europe.
Travel to the Seoul office must be approved by the VP of Engineering, Laura Chen.
Trains are preferred to flights for trips under 4 hours.
Employees do not need approval for local travel within Berlin.
The policy applies to all trips from 1 May 2026.""",
    "en-remote": """Remote Work Policy
People team; questions go to Tom Becker.
Employees may work remotely up to 3 days per week.
Tuesdays and Thursdays are office days for every team.
Working from abroad is allowed for at most 20 working days per year.
The company pays a home office allowance of 500 euros once, and 30 euros per month for internet.
Remote work from abroad requires written approval from the People team.
Employees in their probation period of 6 months work from the office.
This policy takes effect on 2026-02-01.""",
    "en-release": """Release Process for Nimbus
Release engineering team, owner: Priya Nair.
Nimbus is released every 2 weeks, on Wednesdays.
Version 4.2 ships on 2026-05-13 and is the last release that supports Python 3.9.
Every release needs at least 2 approving reviews and a green CI run.
Hotfixes may skip the release train but must be approved by Priya Nair.
Release notes are published on the status page within 24 hours of the release.
A release is not rolled back without an incident ticket.""",
    "ko-leave": """연차 휴가 규정
담당: 인사팀 김민수 팀장 / 개정일: 2026-01-05
정규직 직원은 매년 15일의 유급 연차를 받습니다.
3일 이상 휴가는 10영업일 전까지 HR 시스템에서 신청해야 합니다.
휴가는 소속 팀장이 3영업일 안에 승인합니다.
쓰지 못한 연차는 5일까지 다음 해로 이월됩니다.
이월된 연차는 2027년 3월 31일까지 사용해야 합니다.
연차는 퇴사할 때를 제외하고 현금으로 보상하지 않습니다.
병가는 연차와 별도이며, 3일 넘게 쉬면 진단서가 필요합니다.""",
    "ko-expenses": """경비 정산 안내
재무팀 이지은 과장 작성, 2026년 2월 1일 개정
경비는 사용일로부터 30일 이내에 스펜드와이즈에서 청구합니다.
5만 원을 넘는 지출은 영수증을 첨부해야 합니다.
100만 원을 넘는 청구는 본부장 승인이 추가로 필요합니다.
출장 중 하루 식비는 6만 원까지 지원합니다.
승인된 경비는 다음 달 급여와 함께 지급됩니다.
주류와 개인 유흥비는 지원하지 않습니다.""",
    "ko-laptop": """노트북 교체 프로그램
운영: IT운영팀, 문의: 박준호 대리
개발자는 3년마다, 그 외 직원은 4년마다 새 노트북을 받습니다.
표준 모델은 메모리 32GB의 씽크패드 X1 카본입니다.
2026년 교체 신청은 4월 1일부터 4월 30일까지 받습니다.
새 노트북을 받은 뒤 14일 안에 기존 노트북을 반납해야 합니다.
분실한 노트북은 한 번만 교체해 주며, 두 번째 분실부터는 40만 원을 부담합니다.
개인 데이터는 IT운영팀이 옮겨 주지 않습니다.""",
    "ko-oncall": """온콜 당번 운영 규칙
플랫폼팀 정하늘 팀장 관리
엔지니어는 한 번에 1주일씩 온콜을 맡고, 월요일 오전 10시에 교대합니다.
온콜 담당자는 알림을 받고 15분 안에 응답해야 합니다.
심각도 1 장애는 30분이 지나면 엔지니어링 매니저에게 에스컬레이션합니다.
온콜 수당은 한 주에 25만 원입니다.
한 사람은 1년에 최대 6주까지만 온콜을 맡습니다.
당번 교대는 가능하지만 시작 전에 페이저듀티에 기록해야 합니다.
입사 후 2개월 동안은 온콜에 참여하지 않습니다.
2026년 교대표는 3월 2일에 시작됩니다.""",
    "ko-security": """비밀번호 및 접근 관리 규정
보안팀 최유진 실장 승인, 2026-03-10
비밀번호는 14자 이상이어야 합니다.
모든 계정에는 오티피키 앱을 이용한 2단계 인증이 필요합니다.
비밀번호는 정기적으로 바꾸지 않으며, 유출이 의심될 때만 변경합니다.
운영 환경 접근 권한은 서비스 담당자가 90일마다 검토합니다.
퇴사자의 계정은 24시간 안에 비활성화합니다.
공용 계정 사용은 금지됩니다.
보안 사고는 1시간 안에 보안팀에 신고해야 합니다.""",
    "ko-welfare": """서울 오피스 복리후생 안내
담당: 피플팀 한소희 매니저
모든 직원은 매년 120만 원의 복지 포인트를 받습니다.
복지 포인트는 12월 31일까지 쓰지 않으면 소멸됩니다.
건강검진은 2년에 한 번 회사가 비용 전액을 지원합니다.
점심 식대는 하루 1만 2천 원까지 법인카드로 결제할 수 있습니다.
자녀 출생 시 100만 원의 축하금을 지급합니다.
사내 동호회는 한 달에 1인당 3만 원까지 지원합니다.
복지 포인트는 현금으로 바꿀 수 없습니다.""",
    "ko-remote": """재택근무 운영 기준
피플팀 윤서준 팀장 담당
직원은 한 주에 최대 3일까지 재택근무를 할 수 있습니다.
화요일과 목요일은 모든 팀의 출근일입니다.
해외 원격 근무는 1년에 최대 20영업일까지 허용됩니다.
회사는 재택 장비 지원금 50만 원을 한 번 지급하고, 인터넷 요금으로 매달 3만 원을 지원합니다.
해외 원격 근무는 피플팀의 서면 승인이 필요합니다.
수습 기간 6개월 동안은 사무실에서 근무합니다.
이 기준은 2026년 2월 1일부터 적용됩니다.""",
    "ko-release": """클라우드박스 배포 절차
릴리스엔지니어링팀 오세훈 책임 관리
클라우드박스는 2주마다 수요일에 배포합니다.
버전 4.2는 2026년 5월 13일에 배포되며, 파이썬 3.9를 지원하는 마지막 버전입니다.
모든 배포에는 최소 2명의 승인 리뷰와 통과한 CI 실행이 필요합니다.
긴급 수정은 정기 배포 일정을 따르지 않아도 되지만 오세훈 책임의 승인을 받아야 합니다.
릴리스 노트는 배포 후 24시간 안에 상태 페이지에 게시합니다.
장애 티켓 없이 배포를 롤백하지 않습니다.""",
}

# fmt: off
ITEMS: list[tuple[str, str, str]] = [
    # ---------------------------------------------------------------- English
    ("en-leave", "Full-time employees get 25 days of paid annual leave each calendar year.", "true"),
    ("en-leave", "Up to 5 unused days may be carried over to the next year.", "true"),
    ("en-leave", "Carried-over leave expires on 2027-03-31 if it is not used.", "true"),
    ("en-leave", "Leave is only paid out in cash when an employee leaves the company.", "true"),
    ("en-leave", "Full-time employees get 28 days of paid annual leave each calendar year.", "number"),
    ("en-leave", "Leave requests are approved by Maria Kim in the HR portal.", "name"),
    ("en-leave", "Leave can be paid out in cash at any time.", "negation"),
    ("en-leave", "Employees receive 2 extra days of leave after 5 years of service.", "invented"),
    ("en-leave", "Carried-over days expire on June 30, 2027 if they are not used.", "date"),
    ("en-expenses", "Expense claims are submitted in Spendwise within 30 days of the purchase.", "true"),
    ("en-expenses", "On business trips the daily meal allowance is 60 euros.", "true"),
    ("en-expenses", "Any claim over 50 euros needs an itemised receipt.", "true"),
    ("en-expenses", "Claims of more than €1,000 also need the department head's sign-off.", "true"),
    ("en-expenses", "Employees submit expense claims in Spendwise within 37 days of the purchase.", "number"),
    ("en-expenses", "Finance team, reviewed by Anna Weber on 2026-02-01.", "name"),
    ("en-expenses", "Alcohol and personal entertainment are always reimbursed.", "negation"),
    ("en-expenses", "Taxi rides are reimbursed up to 40 euros per trip.", "invented"),
    ("en-expenses", "The expense rules were reviewed by Maria Kim on 2026-03-01.", "date"),
    ("en-laptops", "Engineers receive a new laptop every 3 years and other staff every 4 years.", "true"),
    ("en-laptops", "The standard model is the ThinkPad X1 Carbon with 32 GB of memory.", "true"),
    ("en-laptops", "Old laptops go back to IT within 14 days of receiving the new one.", "true"),
    ("en-laptops", "Staff other than engineers get a new laptop every four years.", "true"),
    ("en-laptops", "A second loss of a laptop is charged at 450 euros.", "number"),
    ("en-laptops", "The standard model is the MacBook Pro with 32 GB of memory.", "name"),
    ("en-laptops", "Personal data is copied to the new laptop by IT.", "negation"),
    ("en-laptops", "Each employee also gets a 300 euro monitor budget.", "invented"),
    ("en-laptops", "Requests for the 2026 refresh open on 2026-03-01.", "date"),
    ("en-oncall", "The on-call engineer must acknowledge a page within 15 minutes.", "true"),
    ("en-oncall", "Each on-call week is paid 200 euros.", "true"),
    ("en-oncall", "Engineers are on call at most 6 weeks per year.", "true"),
    ("en-oncall", "Engineers in their first two months are not part of the rotation.", "true"),
    ("en-oncall", "Severity 1 incidents are escalated to the engineering manager after 45 minutes.", "number"),
    ("en-oncall", "Swaps are allowed but must be recorded in Opsgenie before the shift starts.", "name"),
    ("en-oncall", "New engineers join the rotation during their first 2 months.", "negation"),
    ("en-oncall", "On-call engineers get 1 day off after each on-call week.", "invented"),
    ("en-oncall", "The 2026 rotation starts on March 9, 2026.", "date"),
    ("en-security", "Passwords must be at least 14 characters long.", "true"),
    ("en-security", "Accounts of people who leave the company are disabled within 24 hours.", "true"),
    ("en-security", "Shared accounts are forbidden.", "true"),
    ("en-security", "Passwords are only changed after a suspected leak.", "true"),
    ("en-security", "Access to production is reviewed every 30 days by the service owner.", "number"),
    ("en-security", "Two-factor authentication with the Google Authenticator app is required for all accounts.", "name"),
    ("en-security", "Passwords are rotated on a schedule.", "negation"),
    ("en-security", "Passwords must be changed every 60 days.", "invented"),
    ("en-security", "The policy was approved by Kevin Brandt on 2026-04-10.", "date"),
    ("en-travel", "Flights are booked through TravelPerk at least 21 days before departure.", "true"),
    ("en-travel", "In Europe, hotel costs are covered up to 180 euros per night.", "true"),
    ("en-travel", "Trains are preferred over flights for trips under 4 hours.", "true"),
    ("en-travel", "Hotel stays in Europe are reimbursed up to €180 a night.", "true"),
    ("en-travel", "Hotel costs are covered up to 250 euros per night in Europe.", "number"),
    ("en-travel", "Travel to the Seoul office must be approved by the VP of Engineering, Mark Lee.", "name"),
    ("en-travel", "Employees need approval for local travel within Berlin.", "negation"),
    ("en-travel", "Each traveller gets a daily allowance of 45 euros for incidentals.", "invented"),
    ("en-travel", "The policy applies to all trips from 1 June 2026.", "date"),
    ("en-remote", "Employees may work remotely up to 3 days per week.", "true"),
    ("en-remote", "Working from abroad is allowed for at most 20 working days per year.", "true"),
    ("en-remote", "The company pays 30 euros a month for internet and a one-off 500 euro allowance.", "true"),
    ("en-remote", "Staff may work from home for no more than 3 days a week.", "true"),
    ("en-remote", "Working from abroad is allowed for at most 25 working days per year.", "number"),
    ("en-remote", "Questions about remote work go to Lisa Wagner.", "name"),
    ("en-remote", "Remote work from abroad does not require written approval from the People team.", "negation"),
    ("en-remote", "Employees who work remotely get a 15 euro lunch voucher per day.", "invented"),
    ("en-remote", "The remote work policy takes effect on 2026-03-01.", "date"),
    ("en-release", "Nimbus is released every 2 weeks, on Wednesdays.", "true"),
    ("en-release", "Every release needs at least 2 approving reviews and a green CI run.", "true"),
    ("en-release", "Version 4.2 is the last Nimbus release that supports Python 3.9.", "true"),
    ("en-release", "Nimbus ships a release every two weeks on Wednesday.", "true"),
    ("en-release", "Release notes are published on the status page within 48 hours of the release.", "number"),
    ("en-release", "Hotfixes may skip the release train but must be approved by David Cho.", "name"),
    ("en-release", "A release may be rolled back without an incident ticket.", "negation"),
    ("en-release", "Each release is tested on a staging cluster for 3 days first.", "invented"),
    ("en-release", "Version 4.2 ships on May 20, 2026.", "date"),
    # ---------------------------------------------------------------- Korean
    ("ko-leave", "정규직 직원은 해마다 유급 연차 15일을 받습니다.", "true"),
    ("ko-leave", "쓰지 못한 연차는 5일까지 다음 해로 이월됩니다.", "true"),
    ("ko-leave", "이월된 연차는 2027-03-31까지 써야 합니다.", "true"),
    ("ko-leave", "연차를 현금으로 받을 수 있는 것은 퇴사할 때뿐입니다.", "true"),
    ("ko-leave", "정규직 직원은 매년 18일의 유급 연차를 받습니다.", "number"),
    ("ko-leave", "휴가는 이지은 팀장이 3영업일 안에 승인합니다.", "name"),
    ("ko-leave", "연차는 언제든 현금으로 보상합니다.", "negation"),
    ("ko-leave", "근속 5년이 지나면 연차가 2일 더 주어집니다.", "invented"),
    ("ko-leave", "이월된 연차는 2027년 6월 30일까지 사용해야 합니다.", "date"),
    ("ko-expenses", "경비는 사용일로부터 30일 이내에 스펜드와이즈에서 청구합니다.", "true"),
    ("ko-expenses", "출장 중 식비는 하루 60,000원까지 지원합니다.", "true"),
    ("ko-expenses", "5만 원을 넘는 지출에는 영수증을 첨부해야 합니다.", "true"),
    ("ko-expenses", "출장 식비는 하루 최대 6만원입니다.", "true"),
    ("ko-expenses", "출장 중 하루 식비는 7만 원까지 지원합니다.", "number"),
    ("ko-expenses", "재무팀 박서연 과장 작성, 2026년 2월 1일 개정", "name"),
    ("ko-expenses", "주류와 개인 유흥비도 지원합니다.", "negation"),
    ("ko-expenses", "택시비는 한 번에 3만 원까지 지원합니다.", "invented"),
    ("ko-expenses", "경비 정산 안내는 2026년 3월 1일에 개정되었습니다.", "date"),
    ("ko-laptop", "개발자는 3년마다, 그 외 직원은 4년마다 새 노트북을 받습니다.", "true"),
    ("ko-laptop", "새 노트북을 받으면 14일 안에 기존 노트북을 반납해야 합니다.", "true"),
    ("ko-laptop", "표준 모델은 32GB 메모리를 갖춘 씽크패드 X1 카본입니다.", "true"),
    ("ko-laptop", "새 노트북을 받은 뒤 2주 안에 예전 노트북을 돌려줘야 합니다.", "true"),
    ("ko-laptop", "두 번째 분실부터는 50만 원을 부담합니다.", "number"),
    ("ko-laptop", "노트북 교체 문의는 최동욱 대리에게 합니다.", "name"),
    ("ko-laptop", "개인 데이터는 IT운영팀이 옮겨 줍니다.", "negation"),
    ("ko-laptop", "모든 직원은 모니터 구입비로 30만 원을 받습니다.", "invented"),
    ("ko-laptop", "2026년 교체 신청은 3월 1일부터 받습니다.", "date"),
    ("ko-oncall", "온콜 담당자는 알림을 받고 15분 안에 응답해야 합니다.", "true"),
    ("ko-oncall", "온콜 수당은 주당 25만 원입니다.", "true"),
    ("ko-oncall", "한 사람이 온콜을 맡는 것은 1년에 최대 6주까지입니다.", "true"),
    ("ko-oncall", "심각도 1 장애가 30분 넘게 이어지면 엔지니어링 매니저에게 올립니다.", "true"),
    ("ko-oncall", "심각도 1 장애는 45분이 지나면 엔지니어링 매니저에게 에스컬레이션합니다.", "number"),
    ("ko-oncall", "온콜 규칙은 플랫폼팀 김태호 팀장이 관리합니다.", "name"),
    ("ko-oncall", "입사 후 2개월 동안에도 온콜에 참여합니다.", "negation"),
    ("ko-oncall", "온콜 주간이 끝나면 하루 대체 휴무를 1일 받습니다.", "invented"),
    ("ko-oncall", "2026년 교대표는 3월 9일에 시작됩니다.", "date"),
    ("ko-security", "비밀번호는 14자 이상이어야 합니다.", "true"),
    ("ko-security", "퇴사자 계정은 24시간 안에 비활성화됩니다.", "true"),
    ("ko-security", "공용 계정 사용은 금지됩니다.", "true"),
    ("ko-security", "퇴사한 사람의 계정은 하루 안에 막힙니다.", "true"),
    ("ko-security", "운영 환경 접근 권한은 서비스 담당자가 30일마다 검토합니다.", "number"),
    ("ko-security", "보안팀 강민호 실장 승인, 2026-03-10", "name"),
    ("ko-security", "비밀번호는 정기적으로 바꿉니다.", "negation"),
    ("ko-security", "비밀번호는 60일마다 변경해야 합니다.", "invented"),
    ("ko-security", "보안팀 최유진 실장 승인, 2026-04-10", "date"),
    ("ko-welfare", "모든 직원은 해마다 복지 포인트 120만 원을 받습니다.", "true"),
    ("ko-welfare", "점심 식대는 하루 12,000원까지 법인카드로 결제할 수 있습니다.", "true"),
    ("ko-welfare", "복지 포인트는 현금으로 바꿀 수 없습니다.", "true"),
    ("ko-welfare", "복지 포인트는 연말까지 쓰지 않으면 사라집니다.", "true"),
    ("ko-welfare", "자녀 출생 시 150만 원의 축하금을 지급합니다.", "number"),
    ("ko-welfare", "복리후생 담당은 피플팀 서지훈 매니저입니다.", "name"),
    ("ko-welfare", "복지 포인트는 현금으로 바꿀 수 있습니다.", "negation"),
    ("ko-welfare", "결혼하는 직원에게는 50만 원의 축하금을 지급합니다.", "invented"),
    ("ko-welfare", "복지 포인트는 11월 30일까지 쓰지 않으면 소멸됩니다.", "date"),
    ("ko-remote", "직원은 한 주에 최대 3일까지 재택근무를 할 수 있습니다.", "true"),
    ("ko-remote", "해외 원격 근무는 1년에 최대 20영업일까지 허용됩니다.", "true"),
    ("ko-remote", "인터넷 요금은 매달 30,000원을 지원합니다.", "true"),
    ("ko-remote", "수습 6개월 동안은 재택근무 없이 사무실로 출근합니다.", "true"),
    ("ko-remote", "해외 원격 근무는 1년에 최대 25영업일까지 허용됩니다.", "number"),
    ("ko-remote", "재택근무 기준은 피플팀 장민재 팀장이 담당합니다.", "name"),
    ("ko-remote", "해외 원격 근무는 피플팀의 서면 승인이 필요하지 않습니다.", "negation"),
    ("ko-remote", "재택근무를 하는 날에는 점심값 1만 원을 지원합니다.", "invented"),
    ("ko-remote", "재택근무 기준은 2026년 3월 1일부터 적용됩니다.", "date"),
    ("ko-release", "클라우드박스는 2주마다 수요일에 배포합니다.", "true"),
    ("ko-release", "모든 배포에는 최소 2명의 승인 리뷰와 통과한 CI 실행이 필요합니다.", "true"),
    ("ko-release", "릴리스 노트는 배포하고 24시간 안에 상태 페이지에 올립니다.", "true"),
    ("ko-release", "파이썬 3.9를 지원하는 마지막 버전은 2026년 5월 13일에 나오는 4.2입니다.", "true"),
    ("ko-release", "릴리스 노트는 배포 후 48시간 안에 상태 페이지에 게시합니다.", "number"),
    ("ko-release", "긴급 수정은 정기 배포 일정을 따르지 않아도 되지만 한지민 책임의 승인을 받아야 합니다.", "name"),
    ("ko-release", "장애 티켓 없이도 배포를 롤백할 수 있습니다.", "negation"),
    ("ko-release", "모든 배포는 스테이징 환경에서 3일 동안 먼저 테스트합니다.", "invented"),
    ("ko-release", "버전 4.2는 2026년 5월 20일에 배포됩니다.", "date"),
]
# fmt: on
