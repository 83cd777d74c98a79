# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The access filters read rke2_numa_prove as the access_check action does: "false" (-e, an AWX survey) is false."""
from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.filter.access import access_findings, access_reviews
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import rbac


@pytest.mark.parametrize("spelling", ["false", "False", "no", "0", "off"])
def test_prove_false_as_a_string_asks_for_what_a_roll_without_probes_needs(spelling):
    assert access_reviews("rolling", prove=spelling) == access_reviews("rolling", prove=False)
    assert access_reviews("rolling", prove=spelling) != access_reviews("rolling", prove=True)


def test_the_findings_read_the_same_answers_the_reviews_asked():
    """The action (its argument spec reads 'false' as false) and the reviews filter must ask and read the same list:
    a mismatch is 'its answer was not the reviews asked for' and blocks every roll."""
    asked = access_reviews("rolling", prove="false")
    answered = {"kind": "List", "items": [dict(review, status={"allowed": i > 0}) for i, review in enumerate(asked["items"])]}
    found = rbac.access_findings(answered, "rolling", prove=False)
    assert not found["unreadable"] and not found["everything"] and found["missing"] == []
    assert access_findings(answered, "rolling", prove="false") == found


def test_prove_that_is_no_boolean_is_refused_naming_it():
    with pytest.raises(AnsibleFilterError, match="rke2_numa_prove 'maybe' must be true or false"):
        access_reviews("rolling", prove="maybe")
